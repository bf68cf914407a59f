import type { FileVersion } from '../../protocol/index.ts';
import type { ServiceDatabase } from '../db/open.ts';
import { nowIso } from '../clock.ts';
import type { Caller } from './access-tokens.ts';

/** Who writes: the writing client's name (`dev@laptop:~/code/app`, as it says) and its token's kind. */
export interface Writer {
  name: string | null;
  kind: Caller | null;
}

export const UNKNOWN_WRITER: Writer = { name: null, kind: null };

/** The version of a file the service holds now (null hash: deleted), with who wrote it and when. */
export interface CurrentVersion {
  version: number;
  hash: string | null;
  written_at: string;
  written_by: string | null;
}

export interface HistoryRetention {
  /** Replaced versions older than this go (default 30). */
  days: number;
  /** And past this many bytes of replaced versions in one repository, the oldest go first (default 256 MiB). */
  bytes: number;
}

export const DEFAULT_RETENTION: HistoryRetention = { days: 30, bytes: 256 * 1024 * 1024 };

/** One stored version, as `version_content` and `restore_version` read it. */
export interface StoredVersion {
  version: number;
  repo_id: string;
  flow_path: string;
  path: string;
  hash: string | null;
  content: string | null;
}

/**
 * Every version of every flow file, the current one included, in one append-only table: a write marks the
 * version it replaces (`replaced_at`, and its content, taken from the file row) and adds its own, whose content
 * stays in the file row while it is current; a deletion adds a tombstone (no hash, no content). Pruning
 * removes only replaced versions (and tombstones) past the retention, never what a file holds now. Not a
 * transaction itself: the function that writes wraps the whole call in one, history included.
 */
export class FileHistory {
  private readonly statements;

  constructor(db: ServiceDatabase) {
    this.statements = {
      current: db.prepare(
        `SELECT version, hash, written_at, written_by FROM file_versions
         WHERE repo_id = ? AND flow_path = ? AND path = ? AND replaced_at IS NULL`,
      ),
      // The version replaced takes its content from the file row (where a current version's content lives).
      replace: db.prepare(
        `UPDATE file_versions SET replaced_at = @now,
           content = coalesce(content, (SELECT f.content FROM flow_files f WHERE f.id = @fileId))
         WHERE repo_id = @repoId AND flow_path = @flowPath AND path = @path AND replaced_at IS NULL`,
      ),
      currentContent: db
        .prepare(
          `SELECT f.content FROM flow_files f JOIN flows fl ON fl.id = f.flow_id
         WHERE fl.repo_id = ? AND fl.flow_path = ? AND f.path = ?`,
        )
        .pluck(),
      insert: db.prepare(
        `INSERT INTO file_versions (repo_id, flow_path, path, hash, content, size, written_at, written_by, writer_kind)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      ),
      versions: db.prepare(
        `SELECT version, hash, size, written_at, written_by, writer_kind, replaced_at IS NULL AS current
         FROM file_versions WHERE repo_id = ? AND flow_path = ? AND path = ? ORDER BY version DESC`,
      ),
      byVersion: db.prepare(
        'SELECT version, repo_id, flow_path, path, hash, content FROM file_versions WHERE version = ?',
      ),
      pruneOld: db.prepare(
        `DELETE FROM file_versions WHERE (replaced_at IS NOT NULL AND replaced_at < @cutoff)
           OR (replaced_at IS NULL AND hash IS NULL AND written_at < @cutoff)`,
      ),
      keptBytes: db.prepare(
        `SELECT repo_id, sum(size) AS bytes FROM file_versions WHERE replaced_at IS NOT NULL
         GROUP BY repo_id HAVING bytes > ?`,
      ),
      oldestReplaced: db.prepare(
        `SELECT version, size FROM file_versions WHERE repo_id = ? AND replaced_at IS NOT NULL
         ORDER BY replaced_at, version LIMIT 500`,
      ),
      remove: db.prepare('DELETE FROM file_versions WHERE version = ?'),
    };
  }

  current(repoId: string, flowPath: string, path: string): CurrentVersion | null {
    return (this.statements.current.get(repoId, flowPath, path) as CurrentVersion | undefined) ?? null;
  }

  /**
   * Records a write, before the file row changes: the version the file had is now replaced and takes its content
   * from that row (`fileId`; null when there is none: a new file). The new version keeps no content of its own
   * while it is current (the file row has it), so a file's content is stored once: history roughly halved
   * ingest when it was stored twice (bench/service.ts). `written` null records a deletion.
   */
  record(
    repoId: string,
    flowPath: string,
    path: string,
    fileId: string | null,
    written: { hash: string; size: number } | null,
    writer: Writer,
    now = nowIso(),
  ): number {
    const s = this.statements;
    s.replace.run({ now, fileId, repoId, flowPath, path });
    const info = s.insert.run(
      repoId,
      flowPath,
      path,
      written?.hash ?? null,
      null,
      written?.size ?? 0,
      now,
      writer.name,
      writer.kind,
    );
    return Number(info.lastInsertRowid);
  }

  /** A file's versions, newest first, deletions included. */
  versions(repoId: string, flowPath: string, path: string): FileVersion[] {
    const rows = this.statements.versions.all(repoId, flowPath, path) as {
      version: number;
      hash: string | null;
      size: number;
      written_at: string;
      written_by: string | null;
      writer_kind: FileVersion['writer_kind'];
      current: number;
    }[];
    return rows.map((row) => ({ ...row, current: row.current === 1 }));
  }

  version(version: number): StoredVersion | null {
    const found = this.statements.byVersion.get(version) as StoredVersion | undefined;
    if (!found) return null;
    // A current version's content is the file's own.
    if (found.content === null && found.hash !== null)
      found.content = this.statements.currentContent.get(
        found.repo_id,
        found.flow_path,
        found.path,
      ) as string;
    return found;
  }

  /** Removes what is past the retention; returns how many versions went. */
  prune(retention: HistoryRetention, now = Date.now()): number {
    const s = this.statements;
    const cutoff = new Date(now - retention.days * 86_400_000).toISOString();
    let removed = s.pruneOld.run({ cutoff }).changes;
    for (const { repo_id, bytes } of s.keptBytes.all(retention.bytes) as {
      repo_id: string;
      bytes: number;
    }[]) {
      let over = bytes - retention.bytes;
      while (over > 0) {
        const oldest = s.oldestReplaced.all(repo_id) as { version: number; size: number }[];
        if (oldest.length === 0) break;
        for (const { version, size } of oldest) {
          if (over <= 0) break;
          s.remove.run(version);
          over -= size;
          removed++;
        }
      }
    }
    return removed;
  }
}
