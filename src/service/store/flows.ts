import { randomUUID } from 'node:crypto';
import type { Conflict, FileEntry, FlowFileRecord, SyncedFile } from '../../protocol/index.ts';
import type { ServiceDatabase } from '../db/open.ts';
import { nowIso } from '../clock.ts';
import { flowAggregateHash, sha256Hex } from '../hash.ts';
import { FileHistory, UNKNOWN_WRITER, type Writer } from './file-history.ts';

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

/**
 * Flows and their files. Methods are not transactions themselves: the function that calls them wraps the whole
 * call in one, so a batch is stored whole or not at all.
 */
export class FlowStore {
  private readonly statements;
  readonly history: FileHistory;

  constructor(private readonly db: ServiceDatabase) {
    this.history = new FileHistory(db);
    this.statements = {
      insertRepo: db.prepare(
        'INSERT INTO repos (id, owner, name, created_at) VALUES (?, ?, ?, ?) ON CONFLICT (owner, name) DO NOTHING',
      ),
      repoId: db.prepare('SELECT id FROM repos WHERE owner = ? AND name = ?').pluck(),
      repoExists: db.prepare('SELECT 1 FROM repos WHERE id = ?').pluck(),
      flow: db.prepare('SELECT id, hash FROM flows WHERE repo_id = ? AND flow_path = ?'),
      insertFlow: db.prepare(
        'INSERT INTO flows (id, repo_id, flow_path, hash, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)',
      ),
      setFlowHash: db.prepare('UPDATE flows SET hash = ?, updated_at = ? WHERE id = ?'),
      files: db.prepare('SELECT id, path, hash FROM flow_files WHERE flow_id = ?'),
      insertFile: db.prepare(
        `INSERT INTO flow_files (id, flow_id, path, hash, content, size, created_at, updated_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
      ),
      updateFile: db.prepare(
        'UPDATE flow_files SET hash = ?, content = ?, size = ?, updated_at = ? WHERE id = ?',
      ),
      deleteFile: db.prepare('DELETE FROM flow_files WHERE id = ?'),
      repoByName: db.prepare('SELECT id FROM repos WHERE owner = ? AND name = ?').pluck(),
      listFlows: db.prepare(
        `SELECT flow_path, hash, updated_at, (SELECT count(*) FROM flow_files f WHERE f.flow_id = flows.id) AS files
         FROM flows WHERE repo_id = ? ORDER BY flow_path`,
      ),
      listFiles: db.prepare(
        `SELECT fl.flow_path, f.path, f.id, f.hash, f.size, f.updated_at, v.written_by,
           CASE WHEN @withContent THEN f.content END AS content
         FROM flow_files f JOIN flows fl ON fl.id = f.flow_id
         LEFT JOIN file_versions v ON v.repo_id = fl.repo_id AND v.flow_path = fl.flow_path AND v.path = f.path
           AND v.replaced_at IS NULL
         WHERE fl.repo_id = @repoId AND (@flowPath IS NULL OR fl.flow_path = @flowPath)
           AND (fl.flow_path > @afterFlow OR (fl.flow_path = @afterFlow AND f.path > @afterPath))
         ORDER BY fl.flow_path, f.path LIMIT @limit`,
      ),
      fileById: db.prepare(
        `SELECT f.id, f.flow_id AS flow_def_id, fl.repo_id, fl.flow_path, f.path, f.hash, f.size, f.updated_at
         FROM flow_files f JOIN flows fl ON fl.id = f.flow_id WHERE f.id = ?`,
      ),
    };
  }

  /** The repository's id, creating the repository on first sight. */
  ensureRepo(owner: string, name: string): string {
    this.statements.insertRepo.run(randomUUID(), owner, name, nowIso());
    return this.statements.repoId.get(owner, name) as string;
  }

  repoExists(repoId: string): boolean {
    return this.statements.repoExists.get(repoId) !== undefined;
  }

  /**
   * Brings one flow to the given files: created by new path, updated by changed hash, untouched otherwise;
   * `deletes` and `deleteMissing` delete. Every write keeps the version it replaces. A file sent with a base
   * (`base_hash`, or a deletion's) is written only when the service's hash is that base or the content is already
   * equal; otherwise it is a conflict, and nothing of the flow is written.
   */
  syncFlow(
    repoId: string,
    flowPath: string,
    files: readonly FileEntry[],
    options: FlowSyncOptions,
  ): FlowSyncResult {
    const s = this.statements;
    const now = nowIso();
    const writer = options.writer ?? UNKNOWN_WRITER;
    let flow = s.flow.get(repoId, flowPath) as { id: string; hash: string } | undefined;
    const stored = new Map<string, StoredFile>();
    if (flow) for (const file of s.files.all(flow.id) as StoredFile[]) stored.set(file.path, file);

    const result: FlowSyncResult = {
      flowId: flow?.id ?? '',
      created: 0,
      updated: 0,
      deleted: 0,
      written: [],
      conflicts: this.conflictsOf(repoId, flowPath, stored, files, options.deletes ?? []),
    };
    if (result.conflicts.length > 0) return result;
    if (!flow) {
      flow = { id: randomUUID(), hash: flowAggregateHash([]) };
      s.insertFlow.run(flow.id, repoId, flowPath, flow.hash, now, now);
      result.flowId = flow.id;
    }

    const sent = new Set<string>();
    for (const file of files) {
      sent.add(file.path);
      const existing = stored.get(file.path);
      const size = Buffer.byteLength(file.content, 'utf8');
      if (!existing) {
        const id = randomUUID();
        this.history.record(repoId, flowPath, file.path, null, { hash: file.hash, size }, writer, now);
        s.insertFile.run(id, flow.id, file.path, file.hash, file.content, size, now, now);
        stored.set(file.path, { id, path: file.path, hash: file.hash });
        result.created++;
        result.written.push({ flow_path: flowPath, path: file.path, id, hash: file.hash });
      } else if (existing.hash !== file.hash) {
        // History first: the version replaced takes its content from the file row before it changes.
        this.history.record(repoId, flowPath, file.path, existing.id, { hash: file.hash, size }, writer, now);
        s.updateFile.run(file.hash, file.content, size, now, existing.id);
        existing.hash = file.hash;
        result.updated++;
        result.written.push({ flow_path: flowPath, path: file.path, id: existing.id, hash: file.hash });
      }
    }
    const doomed = new Set((options.deletes ?? []).map((deletion) => deletion.path));
    if (options.deleteMissing) for (const path of stored.keys()) if (!sent.has(path)) doomed.add(path);
    for (const path of doomed) {
      const file = stored.get(path);
      if (!file || sent.has(path)) continue;
      this.history.record(repoId, flowPath, path, file.id, null, writer, now);
      s.deleteFile.run(file.id);
      stored.delete(path);
      result.deleted++;
    }

    if (!options.keepFlowHash) {
      const hash = flowAggregateHash(stored.values());
      if (hash !== flow.hash) s.setFlowHash.run(hash, now, flow.id);
    }
    return result;
  }

  /** The files of a flow whose base is not what the service holds (and whose content differs from it). */
  private conflictsOf(
    repoId: string,
    flowPath: string,
    stored: ReadonlyMap<string, StoredFile>,
    files: readonly FileEntry[],
    deletes: readonly { path: string; base_hash: string }[],
  ): Conflict[] {
    const conflicts: Conflict[] = [];
    const conflict = (path: string, base: string | null, sent: string | null) => {
      const current = this.history.current(repoId, flowPath, path);
      conflicts.push({
        flow_path: flowPath,
        path,
        base_hash: base,
        service_hash: stored.get(path)?.hash ?? null,
        sent_hash: sent,
        written_by: current?.written_by ?? null,
        written_at: current?.written_at ?? null,
      });
    };
    for (const file of files) {
      if (file.base_hash === undefined) continue;
      const now = stored.get(file.path)?.hash ?? null;
      if (now !== file.base_hash && now !== file.hash) conflict(file.path, file.base_hash, file.hash);
    }
    for (const { path, base_hash } of deletes) {
      const now = stored.get(path)?.hash ?? null;
      // Already gone is what the deletion wanted.
      if (now !== null && now !== base_hash) conflict(path, base_hash, null);
    }
    return conflicts;
  }

  /** The repository's id by owner and name, or null when nothing was ever synced under them. */
  repoByName(owner: string, name: string): string | null {
    return (this.statements.repoByName.get(owner, name) as string | undefined) ?? null;
  }

  listFlows(repoId: string) {
    return this.statements.listFlows.all(repoId) as {
      flow_path: string;
      hash: string;
      updated_at: string;
      files: number;
    }[];
  }

  /** A page of a repository's files, ordered by flow and path, after the (flow, path) given. */
  listFiles(
    repoId: string,
    page: { flowPath: string | null; withContent: boolean; after: [string, string] | null; limit: number },
  ) {
    const rows = this.statements.listFiles.all({
      repoId,
      flowPath: page.flowPath,
      withContent: page.withContent ? 1 : 0,
      afterFlow: page.after?.[0] ?? '',
      afterPath: page.after?.[1] ?? '',
      limit: page.limit,
    }) as {
      flow_path: string;
      path: string;
      id: string;
      hash: string;
      size: number;
      updated_at: string;
      written_by: string | null;
      content: string | null;
    }[];
    return rows.map(({ content, ...row }) => (content === null ? row : { ...row, content }));
  }

  /**
   * Replaces one file's content; null when no file has that id. With a base, a file whose hash is neither the
   * base nor the new content's is not written: the conflict is returned instead.
   */
  updateFileContent(
    fileId: string,
    content: string,
    base: string | undefined,
    writer: Writer = UNKNOWN_WRITER,
  ): FlowFileRecord | { conflict: Conflict } | null {
    const s = this.statements;
    const file = s.fileById.get(fileId) as (FileRow & { repo_id: string }) | undefined;
    if (!file) return null;
    const now = nowIso();
    const hash = sha256Hex(content);
    if (base !== undefined && file.hash !== base && file.hash !== hash) {
      const current = this.history.current(file.repo_id, file.flow_path, file.path);
      return {
        conflict: {
          flow_path: file.flow_path,
          path: file.path,
          base_hash: base,
          service_hash: file.hash,
          sent_hash: hash,
          written_by: current?.written_by ?? null,
          written_at: current?.written_at ?? null,
        },
      };
    }
    if (hash !== file.hash) {
      const size = Buffer.byteLength(content, 'utf8');
      this.history.record(file.repo_id, file.flow_path, file.path, fileId, { hash, size }, writer, now);
      s.updateFile.run(hash, content, size, now, fileId);
    }
    const flowHash = flowAggregateHash(s.files.all(file.flow_def_id) as StoredFile[]);
    s.setFlowHash.run(flowHash, now, file.flow_def_id);
    const { repo_id: _repo, ...updated } = s.fileById.get(fileId) as FileRow & { repo_id: string };
    return { ...updated, flow_hash: flowHash };
  }
}
