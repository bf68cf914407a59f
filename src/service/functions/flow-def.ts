import {
  FILE_VERSIONS_PAGE_MAX,
  MAX_FILE_BYTES,
  unsafePathReason,
  type Conflict,
  type FileEntry,
} from '../../protocol/index.ts';
import { CallRefused } from '../errors.ts';
import { sha256Hex } from '../hash.ts';
import { FlowStore } from '../store/flows.ts';
import type { ServiceStores } from './stores.ts';
import type { Writer } from '../store/file-history.ts';
import type { CallContext, Implementations } from './types.ts';
import { AuditLog } from '../store/audit-log.ts';
import { auditActorOf, BULK_DELETE_AUDIT } from './audit.ts';

type FlowDefPath =
  | 'svc/flow_def/action/sync_batch/run'
  | 'svc/flow_def/private/sync_internal'
  | 'svc/flow_def/public/update_file'
  | 'svc/flow_def/public/capabilities'
  | 'svc/flow_def/public/list_flows'
  | 'svc/flow_def/public/list_files'
  | 'svc/flow_def/public/list_deleted'
  | 'svc/flow_def/public/file_versions'
  | 'svc/flow_def/public/version_content'
  | 'svc/flow_def/action/restore_version/run'
  | 'svc/flow_def/private/purge_history'
  | 'svc/flow_def/action/keep_copy/run';

export function flowDefFunctions({ db, retention }: ServiceStores): Implementations<FlowDefPath> {
  // Who wrote it is the credential's member; the client's label is kept beside it, as the device it names.
  const writerOf = (ctx: CallContext): Writer => ({
    name: ctx.writer,
    kind: ctx.caller,
    memberId: ctx.member?.memberId ?? null,
    tokenId: ctx.member?.tokenId ?? null,
  });
  /** A repository by owner and name; refused when nothing was ever synced under them. */
  const repoNamed = async (flows: FlowStore, owner: string, name: string) => {
    const repoId = await flows.repoByName(owner, name);
    if (repoId === null)
      throw new CallRefused(`No repository ${owner}/${name} on this service.`, { path: ['repo_name'] });
    return repoId;
  };
  /** One call's writes, whole or not at all; its reads see one state. */
  const writing = <T>(work: (flows: FlowStore, audit: AuditLog) => Promise<T>) =>
    db.transaction((sql) => work(new FlowStore(sql), new AuditLog(sql)));
  const reading = <T>(work: (flows: FlowStore) => Promise<T>) => db.read((sql) => work(new FlowStore(sql)));

  return {
    'svc/flow_def/action/sync_batch/run': (args, ctx) => {
      const seen = new Set<string>();
      args.flows.forEach((flow, index) => {
        refuseUnsafePath(flow.flow_path, ['flows', index, 'flow_path']);
        if (seen.has(flow.flow_path)) {
          throw new CallRefused(`flows.${index}.flow_path "${flow.flow_path}" appears twice in the batch.`, {
            path: ['flows', index, 'flow_path'],
          });
        }
        seen.add(flow.flow_path);
        checkFiles(flow.files, ['flows', index, 'files']);
        checkDeletes(flow.deletes ?? [], ['flows', index, 'deletes']);
      });

      return writing(async (flows, audit) => {
        const repoId = await flows.ensureRepo(args.repo_owner, args.repo_name);
        await flows.lockFlows(
          repoId,
          args.flows.map((flow) => flow.flow_path),
        );
        const value = {
          files_created: 0,
          files_deleted: 0,
          files_updated: 0,
          flows_synced: 0,
          skipped: false,
          repo_id: repoId,
          files: [] as { flow_path: string; path: string; id: string; hash: string }[],
          conflicts: [] as Conflict[],
        };
        for (const flow of args.flows) {
          const result = await flows.syncFlow(repoId, flow.flow_path, flow.files, {
            deleteMissing: args.delete_missing ?? false,
            deletes: flow.deletes ?? [],
            keepFlowHash: false,
            writer: writerOf(ctx),
          });
          value.conflicts.push(...result.conflicts);
          value.files_created += result.created;
          value.files_updated += result.updated;
          value.files_deleted += result.deleted;
          value.flows_synced++;
          value.files.push(...result.written);
        }
        value.skipped = value.files_created + value.files_updated + value.files_deleted === 0;
        if (value.files_deleted >= BULK_DELETE_AUDIT)
          await audit.append(auditActorOf(ctx), {
            action: 'bulk_delete',
            target: `${args.repo_owner}/${args.repo_name}`,
            detail: { deleted: value.files_deleted, flows: args.flows.map((flow) => flow.flow_path) },
            traceId: ctx.traceId,
          });
        return value;
      });
    },

    'svc/flow_def/private/sync_internal': (args, ctx) => {
      refuseUnsafePath(args.flow_path, ['flow_path']);
      checkFiles(args.files, ['files']);
      return writing(async (flows, audit) => {
        if (!(await flows.repoExists(args.repo_id))) {
          throw new CallRefused(
            `No repository with id ${args.repo_id}: sync it once with sync_batch first.`,
            {
              path: ['repo_id'],
            },
          );
        }
        await flows.lockFlows(args.repo_id, [args.flow_path]);
        const result = await flows.syncFlow(args.repo_id, args.flow_path, args.files, {
          deleteMissing: args.delete_missing ?? false,
          keepFlowHash: args.skip_hash_update ?? false,
          writer: writerOf(ctx),
        });
        if (result.deleted >= BULK_DELETE_AUDIT)
          await audit.append(auditActorOf(ctx), {
            action: 'bulk_delete',
            target: `repository ${args.repo_id}`,
            detail: { deleted: result.deleted, flows: [args.flow_path] },
            traceId: ctx.traceId,
          });
        return {
          files_created: result.created,
          files_deleted: result.deleted,
          files_updated: result.updated,
          flow_def_id: result.flowId,
          files: result.written,
          conflicts: result.conflicts,
        };
      });
    },

    'svc/flow_def/public/update_file': async (args, ctx) => {
      const record = await writing((flows) =>
        flows.updateFileContent(args.fileId, args.content, args.base_hash, writerOf(ctx)),
      );
      if (!record) throw new CallRefused(`No file with id ${args.fileId}.`, { path: ['fileId'] });
      if ('conflict' in record) throw conflictRefusal(record.conflict as Conflict);
      return record;
    },

    'svc/flow_def/public/capabilities': () => ({
      bases: true,
      history: true,
      retention_days: retention.days,
      retention_bytes: retention.bytes,
      conflict_copies: true,
      repo_config_bases: true,
      live_changes: true,
      members: true,
    }),

    'svc/flow_def/public/list_flows': (args) =>
      reading(async (flows) => {
        const repoId = await flows.repoByName(args.repo_owner, args.repo_name);
        return { flows: repoId === null ? [] : await flows.listFlows(repoId) };
      }),

    'svc/flow_def/public/list_files': (args) =>
      reading(async (flows) => {
        const repoId = await flows.repoByName(args.repo_owner, args.repo_name);
        if (repoId === null) return { files: [], next: null };
        const limit = args.first ?? 1000;
        const files = await flows.listFiles(repoId, {
          flowPath: args.flow_path ?? null,
          withContent: args.with_content ?? false,
          after: args.after === undefined ? null : cursorOf(args.after),
          limit,
        });
        const last = files.at(-1);
        return { files, next: files.length === limit && last ? cursorFor(last.flow_path, last.path) : null };
      }),

    'svc/flow_def/public/list_deleted': (args) =>
      reading(async (flows) => {
        const repoId = await flows.repoByName(args.repo_owner, args.repo_name);
        if (repoId === null) return { files: [], next: null };
        const limit = args.first ?? 1000;
        const files = await flows.history.deleted(repoId, {
          after: args.after === undefined ? null : cursorOf(args.after),
          limit,
        });
        const last = files.at(-1);
        return { files, next: files.length === limit && last ? cursorFor(last.flow_path, last.path) : null };
      }),

    'svc/flow_def/public/file_versions': (args) =>
      reading(async (flows) => {
        const repoId = await repoNamed(flows, args.repo_owner, args.repo_name);
        // Paged: a file written every minute has tens of thousands of versions in its 30 days.
        const limit = args.first ?? FILE_VERSIONS_PAGE_MAX;
        const versions = await flows.history.versions(repoId, args.flow_path, args.path, {
          before: args.after === undefined ? null : versionCursorOf(args.after),
          limit,
        });
        const last = versions.at(-1);
        return {
          flow_path: args.flow_path,
          path: args.path,
          versions,
          purges: await flows.history.purges(repoId, args.flow_path, args.path),
          next: versions.length === limit && last ? String(last.version) : null,
          capped: await flows.history.lastCapped(repoId),
        };
      }),

    'svc/flow_def/private/purge_history': (args, ctx) =>
      writing(async (flows, audit) => {
        const repoId = await repoNamed(flows, args.repo_owner, args.repo_name);
        const file = { repoId, flowPath: args.flow_path, path: args.path };
        // The flow is ours while its versions go: a write to it meanwhile would replace a version being purged.
        await flows.lockFlows(repoId, [args.flow_path]);
        if (args.version !== undefined) {
          const found = await flows.history.version(args.version);
          if (
            !found ||
            found.repo_id !== repoId ||
            found.flow_path !== file.flowPath ||
            found.path !== file.path
          )
            throw new CallRefused(
              `No version ${args.version} of ${file.flowPath}/${file.path} (past the retention, purged, or another file's).`,
              { path: ['version'] },
            );
          const current = await flows.history.current(repoId, file.flowPath, file.path);
          if (current?.version === args.version)
            throw new CallRefused(
              `Version ${args.version} is what ${file.flowPath}/${file.path} holds now: delete the file (or write over it) first, then purge.`,
              { path: ['version'] },
            );
        }
        const purge = await flows.history.purge(
          file,
          args.version ?? null,
          ctx.writer,
          ctx.member?.memberId ?? null,
        );
        await audit.append(auditActorOf(ctx), {
          action: 'purge_history',
          target: `${args.repo_owner}/${args.repo_name} ${file.flowPath}/${file.path}`,
          detail: { version: args.version ?? 'all but the current', versions: purge.versions },
          traceId: ctx.traceId,
        });
        return { flow_path: file.flowPath, path: file.path, purge };
      }),

    'svc/flow_def/public/version_content': (args) =>
      // A transaction: a current version's content is read from its file, which a write may change in between.
      writing(async (flows) => {
        const found = await flows.history.version(args.version);
        if (!found) throw noVersion(args.version);
        return {
          version: found.version,
          flow_path: found.flow_path,
          path: found.path,
          hash: found.hash,
          content: found.content,
        };
      }),

    'svc/flow_def/action/restore_version/run': (args, ctx) =>
      writing(async (flows, audit) => {
        const asked = await flows.history.version(args.version);
        if (!asked) throw noVersion(args.version);
        // Read again once the flow is ours: a current version's content is its file's, which may have changed.
        await flows.lockFlows(asked.repo_id, [asked.flow_path]);
        const found = await flows.history.version(args.version);
        if (!found) throw noVersion(args.version);
        const { repo_id: repoId, flow_path: flowPath, path } = found;
        const base = args.base_hash === undefined ? undefined : args.base_hash;
        const result =
          found.hash === null || found.content === null
            ? await flows.syncFlow(repoId, flowPath, [], {
                deleteMissing: false,
                deletes: [
                  {
                    path,
                    base_hash: base ?? (await flows.history.current(repoId, flowPath, path))?.hash ?? '',
                  },
                ],
                keepFlowHash: false,
                writer: writerOf(ctx),
              })
            : await flows.syncFlow(
                repoId,
                flowPath,
                [
                  {
                    path,
                    content: found.content,
                    hash: found.hash,
                    ...(base !== undefined && { base_hash: base }),
                  },
                ],
                { deleteMissing: false, keepFlowHash: false, writer: writerOf(ctx) },
              );
        if (result.conflicts.length > 0) throw conflictRefusal(result.conflicts[0]!);
        const now = await flows.history.current(repoId, flowPath, path);
        await audit.append(auditActorOf(ctx), {
          action: 'restore_version',
          target: `${flowPath}/${path}`,
          detail: { repo_id: repoId, from: args.version, to: now!.version },
          traceId: ctx.traceId,
        });
        return { flow_path: flowPath, path, version: now!.version, hash: now!.hash };
      }),

    'svc/flow_def/action/keep_copy/run': (args, ctx) => {
      refuseUnsafePath(args.flow_path, ['flow_path']);
      refuseUnsafePath(args.path, ['path']);
      if (sha256Hex(args.content) !== args.hash)
        throw new CallRefused('hash is not the SHA-256 of content.', { path: ['hash'] });
      // Bounded like any file (the agent never sends more), and each member's copies of a repository to a quarter
      // of its history's cap: one member's copies can push out only their own older copies (issue 48).
      const size = Buffer.byteLength(args.content);
      const copyBytes = Math.floor(retention.bytes / 4);
      if (size > MAX_FILE_BYTES || size > copyBytes)
        throw new CallRefused(
          `A conflict copy of ${size} bytes is over what the service keeps (${Math.min(MAX_FILE_BYTES, copyBytes)} bytes: a flow file's limit, and a quarter of a repository's history for one member's copies): nothing was kept.`,
          { path: ['content'] },
        );
      return writing(async (flows) => {
        const repoId = await repoNamed(flows, args.repo_owner, args.repo_name);
        const version = await flows.history.keepCopy(
          { repoId, flowPath: args.flow_path, path: args.path },
          { hash: args.hash, content: args.content, size },
          writerOf(ctx),
          copyBytes,
        );
        return { version };
      });
    },
  };
}

/** A write on a stale base, refused (422) with the conflict in `errorData`, so a client can show both sides. */
function conflictRefusal(conflict: Conflict): CallRefused {
  const who = conflict.written_by ? ` by ${conflict.written_by}` : '';
  const when = conflict.written_at ? ` at ${conflict.written_at}` : '';
  return new CallRefused(
    `${conflict.flow_path}/${conflict.path} changed on the service${who}${when} since the version this write is based on: nothing was written.`,
    { reason: 'conflict', conflict },
  );
}

function noVersion(version: number): CallRefused {
  return new CallRefused(`No version ${version} (past the retention, or never).`, { path: ['version'] });
}

/** file_versions' cursor: the last version number of the page (the next page is older). */
function versionCursorOf(after: string): number {
  const version = Number(after);
  if (!/^[1-9][0-9]{0,15}$/.test(after) || !Number.isSafeInteger(version))
    throw new CallRefused('`after` is not a cursor this service gave: start from the first page.', {
      path: ['after'],
    });
  return version;
}

/** list_files' cursor: the last (flow, path) of the page, opaque to the caller. */
function cursorFor(flowPath: string, path: string): string {
  return Buffer.from(JSON.stringify([flowPath, path])).toString('base64url');
}

function cursorOf(cursor: string): [string, string] {
  try {
    const parsed: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (Array.isArray(parsed) && parsed.length === 2 && parsed.every((part) => typeof part === 'string'))
      return parsed as [string, string];
  } catch {
    // refused below
  }
  throw new CallRefused('`after` is not a cursor this service gave: start from the first page.', {
    path: ['after'],
  });
}

/** Deletions name safe paths, once each, with a hash as base. */
function checkDeletes(deletes: readonly { path: string }[], where: (string | number)[]): void {
  const seen = new Set<string>();
  deletes.forEach(({ path }, index) => {
    refuseUnsafePath(path, [...where, index, 'path']);
    if (seen.has(path))
      throw new CallRefused(`${[...where, index, 'path'].join('.')} "${path}" appears twice.`, {
        path: [...where, index, 'path'],
      });
    seen.add(path);
  });
}

function refuseUnsafePath(path: string, where: (string | number)[]): void {
  const reason = unsafePathReason(path);
  if (reason) {
    throw new CallRefused(`${where.join('.')} "${path.slice(0, 200)}" ${reason}: nothing was written.`, {
      path: where,
    });
  }
}

/** Every path safe and unique within its flow, every hash the SHA-256 of its content; checked before any write. */
function checkFiles(files: readonly FileEntry[], where: (string | number)[]): void {
  const seen = new Set<string>();
  files.forEach((file, index) => {
    refuseUnsafePath(file.path, [...where, index, 'path']);
    if (seen.has(file.path)) {
      throw new CallRefused(
        `${[...where, index, 'path'].join('.')} "${file.path}" appears twice in the flow.`,
        {
          path: [...where, index, 'path'],
        },
      );
    }
    seen.add(file.path);
    if (sha256Hex(file.content) !== file.hash) {
      throw new CallRefused(
        `${[...where, index, 'hash'].join('.')} is not the SHA-256 of the content of "${file.path}": nothing was written.`,
        { path: [...where, index, 'hash'] },
      );
    }
  });
}
