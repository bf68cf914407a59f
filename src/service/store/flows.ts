import { randomUUID } from 'node:crypto';
import type { FileEntry, FlowFileRecord, SyncedFile } from '../../protocol/index.ts';
import type { ServiceDatabase } from '../db/open.ts';
import { nowIso } from '../clock.ts';
import { flowAggregateHash, sha256Hex } from '../hash.ts';

export interface FlowSyncOptions {
  deleteMissing: boolean;
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

  constructor(private readonly db: ServiceDatabase) {
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
      fileById: db.prepare(
        `SELECT f.id, f.flow_id AS flow_def_id, fl.flow_path, f.path, f.hash, f.size, f.updated_at
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

  /** Brings one flow to the given files: created by new path, updated by changed hash, untouched otherwise. */
  syncFlow(
    repoId: string,
    flowPath: string,
    files: readonly FileEntry[],
    options: FlowSyncOptions,
  ): FlowSyncResult {
    const s = this.statements;
    const now = nowIso();
    let flow = s.flow.get(repoId, flowPath) as { id: string; hash: string } | undefined;
    if (!flow) {
      flow = { id: randomUUID(), hash: flowAggregateHash([]) };
      s.insertFlow.run(flow.id, repoId, flowPath, flow.hash, now, now);
    }

    const stored = new Map<string, StoredFile>();
    for (const file of s.files.all(flow.id) as StoredFile[]) stored.set(file.path, file);

    const result: FlowSyncResult = { flowId: flow.id, created: 0, updated: 0, deleted: 0, written: [] };
    const sent = new Set<string>();
    for (const file of files) {
      sent.add(file.path);
      const existing = stored.get(file.path);
      const size = Buffer.byteLength(file.content, 'utf8');
      if (!existing) {
        const id = randomUUID();
        s.insertFile.run(id, flow.id, file.path, file.hash, file.content, size, now, now);
        stored.set(file.path, { id, path: file.path, hash: file.hash });
        result.created++;
        result.written.push({ flow_path: flowPath, path: file.path, id, hash: file.hash });
      } else if (existing.hash !== file.hash) {
        s.updateFile.run(file.hash, file.content, size, now, existing.id);
        existing.hash = file.hash;
        result.updated++;
        result.written.push({ flow_path: flowPath, path: file.path, id: existing.id, hash: file.hash });
      }
    }
    if (options.deleteMissing) {
      for (const [path, file] of stored) {
        if (sent.has(path)) continue;
        s.deleteFile.run(file.id);
        stored.delete(path);
        result.deleted++;
      }
    }

    if (!options.keepFlowHash) {
      const hash = flowAggregateHash(stored.values());
      if (hash !== flow.hash) s.setFlowHash.run(hash, now, flow.id);
    }
    return result;
  }

  /** Replaces one file's content; null when no file has that id. */
  updateFileContent(fileId: string, content: string): FlowFileRecord | null {
    const s = this.statements;
    const file = s.fileById.get(fileId) as FileRow | undefined;
    if (!file) return null;
    const now = nowIso();
    const hash = sha256Hex(content);
    if (hash !== file.hash) s.updateFile.run(hash, content, Buffer.byteLength(content, 'utf8'), now, fileId);
    const flowHash = flowAggregateHash(s.files.all(file.flow_def_id) as StoredFile[]);
    s.setFlowHash.run(flowHash, now, file.flow_def_id);
    const updated = s.fileById.get(fileId) as FileRow;
    return { ...updated, flow_hash: flowHash };
  }
}
