import { randomUUID } from 'node:crypto';
import type { Conflict, FileEntry, FlowFileRecord, SyncedFile } from '../../protocol/index.ts';
import type { Sql } from '../db/open.ts';
import { nowIso } from '../clock.ts';
import { flowAggregateHash, sha256Hex } from '../hash.ts';
import { chunks, parameterList, textPerCount, valueRows } from '../db/rows.ts';
import {
  FileHistory,
  MEMBER_COLUMNS,
  UNKNOWN_WRITER,
  memberRef,
  type MemberColumns,
  type Writer,
} from './file-history.ts';

export interface FlowSyncOptions {
  deleteMissing: boolean;
  /** Files to delete by path, each only if the service's hash is still its base (extension). */
  deletes?: readonly { path: string; base_hash: string }[];
  /** Who writes, for the history. */
  writer?: Writer;
  /** Leave the flow's aggregate hash as it was (sync_internal's `skip_hash_update`). */
  keepFlowHash: boolean;
}

export interface FlowSyncResult {
  flowId: string;
  created: number;
  updated: number;
  deleted: number;
  /** Files created or updated, with their ids. */
  written: SyncedFile[];
  /** Files whose base was stale: when there is one, nothing of the flow was written. */
  conflicts: Conflict[];
}

/** A file row with its flow, before the flow's aggregate hash is added. */
type FileRow = Omit<FlowFileRecord, 'flow_hash'> & {
  id: string;
  flow_def_id: string;
  flow_path: string;
  path: string;
  hash: string;
  size: number;
  updated_at: string;
};

interface StoredFile {
  id: string;
  path: string;
  hash: string;
}

/** A file a call creates or changes. */
interface WrittenFile extends StoredFile {
  content: string;
  size: number;
}

// Statements of many rows (db/rows.ts), their text made once per count.
const ADD_FILES = textPerCount(
  (count) => `INSERT INTO flow_files (id, flow_id, path, hash, content, size, created_at, updated_at)
   VALUES ${valueRows(count, 8)}`,
);
const WRITE_CONTENTS = textPerCount(
  (count) => `UPDATE flow_files SET hash = v.column2, content = v.column3, size = CAST(v.column4 AS INTEGER),
     updated_at = v.column5
   FROM (VALUES ${valueRows(count, 5)}) AS v WHERE flow_files.id = v.column1`,
);
const DELETE_FILES = textPerCount((count) => `DELETE FROM flow_files WHERE id IN (${parameterList(count)})`);

/**
 * Flows and their files. Methods are not transactions themselves: the function that calls them wraps the whole
 * call in one, so a batch is stored whole or not at all.
 */
export class FlowStore {
  readonly history: FileHistory;

  constructor(private readonly sql: Sql) {
    this.history = new FileHistory(sql);
  }

  /** The repository's id, creating the repository on first sight. */
  async ensureRepo(owner: string, name: string): Promise<string> {
    await this.sql.run(
      'INSERT INTO repos (id, owner, name, created_at) VALUES (?, ?, ?, ?) ON CONFLICT (owner, name) DO NOTHING',
      [randomUUID(), owner, name, nowIso()],
    );
    return (await this.repoByName(owner, name))!;
  }

  async repoExists(repoId: string): Promise<boolean> {
    return (await this.sql.get('SELECT 1 AS found FROM repos WHERE id = ?', [repoId])) !== undefined;
  }

  /**
   * Brings one flow to the given files: created by new path, updated by changed hash, untouched otherwise;
   * `deletes` and `deleteMissing` delete. Every write keeps the version it replaces. A file sent with a base
   * (`base_hash`, or a deletion's) is written only when the service's hash is that base or the content is already
   * equal; otherwise it is a conflict, and nothing of the flow is written. The caller holds the flow's lock
   * (lockFlows): a batch takes all of its flows' at once, in order.
   */
  async syncFlow(
    repoId: string,
    flowPath: string,
    files: readonly FileEntry[],
    options: FlowSyncOptions,
  ): Promise<FlowSyncResult> {
    const sql = this.sql;
    const now = nowIso();
    const writer = options.writer ?? UNKNOWN_WRITER;
    let flow = await sql.get<{ id: string; hash: string }>(
      'SELECT id, hash FROM flows WHERE repo_id = ? AND flow_path = ?',
      [repoId, flowPath],
    );
    const stored = new Map<string, StoredFile>();
    if (flow) for (const file of await this.filesOf(flow.id)) stored.set(file.path, file);

    const result: FlowSyncResult = {
      flowId: flow?.id ?? '',
      created: 0,
      updated: 0,
      deleted: 0,
      written: [],
      conflicts: await this.conflictsOf(repoId, flowPath, stored, files, options.deletes ?? []),
    };
    if (result.conflicts.length > 0) return result;
    if (!flow) {
      flow = { id: randomUUID(), hash: flowAggregateHash([]) };
      await sql.run(
        'INSERT INTO flows (id, repo_id, flow_path, hash, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)',
        [flow.id, repoId, flowPath, flow.hash, now, now],
      );
      result.flowId = flow.id;
    }

    const sent = new Set<string>();
    const created: WrittenFile[] = [];
    const changed: WrittenFile[] = [];
    for (const file of files) {
      sent.add(file.path);
      const existing = stored.get(file.path);
      const size = Buffer.byteLength(file.content, 'utf8');
      if (!existing) {
        const id = randomUUID();
        created.push({ id, path: file.path, hash: file.hash, content: file.content, size });
        stored.set(file.path, { id, path: file.path, hash: file.hash });
        result.written.push({ flow_path: flowPath, path: file.path, id, hash: file.hash });
      } else if (existing.hash !== file.hash) {
        changed.push({ id: existing.id, path: file.path, hash: file.hash, content: file.content, size });
        existing.hash = file.hash;
        result.written.push({ flow_path: flowPath, path: file.path, id: existing.id, hash: file.hash });
      }
    }
    const doomed = new Set((options.deletes ?? []).map((deletion) => deletion.path));
    if (options.deleteMissing) for (const path of stored.keys()) if (!sent.has(path)) doomed.add(path);
    const deleted: StoredFile[] = [];
    for (const path of doomed) {
      const file = stored.get(path);
      if (!file || sent.has(path)) continue;
      deleted.push(file);
      stored.delete(path);
    }

    // History first: a version replaced takes its content from its file row, before the row changes.
    await this.history.record(
      { repoId, flowId: flow.id, flowPath },
      [
        ...created.map(({ path, hash, size }) => ({ path, written: { hash, size } })),
        ...changed.map(({ path, hash, size }) => ({ path, written: { hash, size } })),
        ...deleted.map(({ path }) => ({ path, written: null })),
      ],
      writer,
      now,
    );
    for (const part of chunks(created)) {
      const values: unknown[] = [];
      for (const file of part)
        values.push(file.id, flow.id, file.path, file.hash, file.content, file.size, now, now);
      await sql.run(ADD_FILES(part.length), values);
    }
    for (const part of chunks(changed)) await this.writeContents(part, now);
    for (const part of chunks(deleted)) {
      await sql.run(
        DELETE_FILES(part.length),
        part.map((file) => file.id),
      );
    }
    result.created = created.length;
    result.updated = changed.length;
    result.deleted = deleted.length;

    if (!options.keepFlowHash) {
      const hash = flowAggregateHash(stored.values());
      if (hash !== flow.hash) await this.setFlowHash(flow.id, hash, now);
    }
    return result;
  }

  /**
   * Makes other processes' writers of these flows wait until this transaction ends (see Sql.lock). Taken in one
   * order (sorted), so that two batches of the same flows never wait for each other in a circle.
   */
  async lockFlows(repoId: string, flowPaths: readonly string[]): Promise<void> {
    for (const flowPath of [...new Set(flowPaths)].sort()) await this.sql.lock(`flow ${repoId} ${flowPath}`);
  }

  private filesOf(flowId: string): Promise<StoredFile[]> {
    return this.sql.all<StoredFile>('SELECT id, path, hash FROM flow_files WHERE flow_id = ?', [flowId]);
  }

  /** New contents for files that exist, in one statement (UPDATE … FROM VALUES, which both databases speak). */
  private async writeContents(files: readonly WrittenFile[], now: string) {
    const values: unknown[] = [];
    for (const file of files) values.push(file.id, file.hash, file.content, file.size, now);
    await this.sql.run(WRITE_CONTENTS(files.length), values);
  }

  private async setFlowHash(flowId: string, hash: string, now: string) {
    await this.sql.run('UPDATE flows SET hash = ?, updated_at = ? WHERE id = ?', [hash, now, flowId]);
  }

  /** The files of a flow whose base is not what the service holds (and whose content differs from it). */
  private async conflictsOf(
    repoId: string,
    flowPath: string,
    stored: ReadonlyMap<string, StoredFile>,
    files: readonly FileEntry[],
    deletes: readonly { path: string; base_hash: string }[],
  ): Promise<Conflict[]> {
    const stale: { path: string; base: string | null; sent: string | null }[] = [];
    for (const file of files) {
      if (file.base_hash === undefined) continue;
      const now = stored.get(file.path)?.hash ?? null;
      if (now !== file.base_hash && now !== file.hash)
        stale.push({ path: file.path, base: file.base_hash, sent: file.hash });
    }
    for (const { path, base_hash } of deletes) {
      const now = stored.get(path)?.hash ?? null;
      // Already gone is what the deletion wanted.
      if (now !== null && now !== base_hash) stale.push({ path, base: base_hash, sent: null });
    }
    const conflicts: Conflict[] = [];
    for (const { path, base, sent } of stale) {
      const current = await this.history.current(repoId, flowPath, path);
      conflicts.push({
        flow_path: flowPath,
        path,
        base_hash: base,
        service_hash: stored.get(path)?.hash ?? null,
        sent_hash: sent,
        written_by: current?.written_by ?? null,
        written_at: current?.written_at ?? null,
        member: current?.member ?? null,
      });
    }
    return conflicts;
  }

  /** The repository's id by owner and name, or null when nothing was ever synced under them. */
  async repoByName(owner: string, name: string): Promise<string | null> {
    const found = await this.sql.get<{ id: string }>('SELECT id FROM repos WHERE owner = ? AND name = ?', [
      owner,
      name,
    ]);
    return found?.id ?? null;
  }

  listFlows(repoId: string) {
    return this.sql.all<{ flow_path: string; hash: string; updated_at: string; files: number }>(
      `SELECT flow_path, hash, updated_at, (SELECT count(*) FROM flow_files f WHERE f.flow_id = flows.id) AS files
       FROM flows WHERE repo_id = ? ORDER BY flow_path`,
      [repoId],
    );
  }

  /** A page of a repository's files, ordered by flow and path, after the (flow, path) given. */
  async listFiles(
    repoId: string,
    page: { flowPath: string | null; withContent: boolean; after: [string, string] | null; limit: number },
  ) {
    const rows = await this.sql.all<
      {
        flow_path: string;
        path: string;
        id: string;
        hash: string;
        size: number;
        updated_at: string;
        written_by: string | null;
        content: string | null;
      } & MemberColumns
    >(
      `SELECT fl.flow_path, f.path, f.id, f.hash, f.size, f.updated_at, v.written_by, v.member_id, ${MEMBER_COLUMNS},
         CASE WHEN @withContent = 1 THEN f.content END AS content
       FROM flow_files f JOIN flows fl ON fl.id = f.flow_id
       LEFT JOIN file_versions v ON v.repo_id = fl.repo_id AND v.flow_path = fl.flow_path AND v.path = f.path
         AND v.replaced_at IS NULL
       LEFT JOIN members m ON m.id = v.member_id
       WHERE fl.repo_id = @repoId AND (CAST(@flowPath AS TEXT) IS NULL OR fl.flow_path = @flowPath)
         AND (fl.flow_path > @afterFlow OR (fl.flow_path = @afterFlow AND f.path > @afterPath))
       ORDER BY fl.flow_path, f.path LIMIT @limit`,
      {
        repoId,
        flowPath: page.flowPath,
        withContent: page.withContent ? 1 : 0,
        afterFlow: page.after?.[0] ?? '',
        afterPath: page.after?.[1] ?? '',
        limit: page.limit,
      },
    );
    return rows.map(({ content, member_id, member_name, member_shared, member_removed_at, ...row }) => {
      const listed = {
        ...row,
        member: memberRef({ member_id, member_name, member_shared, member_removed_at }),
      };
      return content === null ? listed : { ...listed, content };
    });
  }

  private fileById(fileId: string) {
    return this.sql.get<FileRow & { repo_id: string }>(
      `SELECT f.id, f.flow_id AS flow_def_id, fl.repo_id, fl.flow_path, f.path, f.hash, f.size, f.updated_at
       FROM flow_files f JOIN flows fl ON fl.id = f.flow_id WHERE f.id = ?`,
      [fileId],
    );
  }

  /**
   * Replaces one file's content; null when no file has that id. With a base, a file whose hash is neither the
   * base nor the new content's is not written: the conflict is returned instead.
   */
  async updateFileContent(
    fileId: string,
    content: string,
    base: string | undefined,
    writer: Writer = UNKNOWN_WRITER,
  ): Promise<FlowFileRecord | { conflict: Conflict } | null> {
    const found = await this.fileById(fileId);
    if (!found) return null;
    // Read again once the flow is ours: another process may have written the file meanwhile.
    await this.lockFlows(found.repo_id, [found.flow_path]);
    const file = await this.fileById(fileId);
    if (!file) return null;
    const now = nowIso();
    const hash = sha256Hex(content);
    if (base !== undefined && file.hash !== base && file.hash !== hash) {
      const current = await this.history.current(file.repo_id, file.flow_path, file.path);
      return {
        conflict: {
          flow_path: file.flow_path,
          path: file.path,
          base_hash: base,
          service_hash: file.hash,
          sent_hash: hash,
          written_by: current?.written_by ?? null,
          written_at: current?.written_at ?? null,
          member: current?.member ?? null,
        },
      };
    }
    if (hash !== file.hash) {
      const size = Buffer.byteLength(content, 'utf8');
      const flow = { repoId: file.repo_id, flowId: file.flow_def_id, flowPath: file.flow_path };
      await this.history.record(flow, [{ path: file.path, written: { hash, size } }], writer, now);
      await this.writeContents([{ id: fileId, path: file.path, hash, content, size }], now);
    }
    const flowHash = flowAggregateHash(await this.filesOf(file.flow_def_id));
    await this.setFlowHash(file.flow_def_id, flowHash, now);
    const { repo_id: _repo, ...updated } = (await this.fileById(fileId))!;
    return { ...updated, flow_hash: flowHash };
  }
}
