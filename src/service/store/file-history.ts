import type { FileVersion, HistoryPurge, MemberRef } from '../../protocol/index.ts';
import type { Sql } from '../db/open.ts';
import { nowIso } from '../clock.ts';
import { chunks, parameterList, textPerCount, valueRows } from '../db/rows.ts';
import type { Caller } from './access-tokens.ts';

/**
 * Who writes: the member whose credential made the call and that token's id (decided by the service),
 * the writing client's name for its device (`dev@laptop:~/code/app`, as it says) and its scheme's kind.
 */
export interface Writer {
  name: string | null;
  kind: Caller | null;
  memberId: string | null;
  tokenId: string | null;
}

export const UNKNOWN_WRITER: Writer = { name: null, kind: null, memberId: null, tokenId: null };

/** The version of a file the service holds now (null hash: deleted), with who wrote it and when. */
export interface CurrentVersion {
  version: number;
  hash: string | null;
  written_at: string;
  written_by: string | null;
  member: MemberRef | null;
}

/**
 * A history row's member, named as the members table has them now (a removed one keeps their name, marked), from
 * the columns MEMBER_COLUMNS selects. Null: the row was written before the service had members.
 */
export interface MemberColumns {
  member_id: string | null;
  member_name: string | null;
  member_shared: number | boolean | null;
  member_removed_at: string | null;
}

/** The columns memberRef reads, from `members m` joined on the row's member_id. */
export const MEMBER_COLUMNS =
  'm.name AS member_name, m.shared AS member_shared, m.removed_at AS member_removed_at';

export function memberRef(row: MemberColumns): MemberRef | null {
  if (row.member_id === null) return null;
  // A member the members table does not have (an import of history without its members): its id, unnamed.
  return {
    id: row.member_id,
    name: row.member_name ?? row.member_id,
    shared: Boolean(row.member_shared),
    removed: row.member_removed_at !== null,
  };
}

export interface HistoryRetention {
  /** Replaced versions older than this go (default 30). */
  days: number;
  /** And past this many bytes of replaced versions in one repository, the oldest go first (default 256 MiB). */
  bytes: number;
}

export const DEFAULT_RETENTION: HistoryRetention = { days: 30, bytes: 256 * 1024 * 1024 };

/**
 * The size cap removes no file's last this-many versions (its current one counted) while any file has older ones
 * to remove: a quiet file keeps its history however busy another file of the repository is.
 */
export const KEEP_PER_FILE = 5;

/** One stored version, as `version_content` and `restore_version` read it. */
export interface StoredVersion {
  version: number;
  repo_id: string;
  flow_path: string;
  path: string;
  hash: string | null;
  content: string | null;
}

const REPLACE_VERSIONS = textPerCount(
  (count) => `UPDATE file_versions SET replaced_at = ?,
     content = coalesce(content,
       (SELECT f.content FROM flow_files f WHERE f.flow_id = ? AND f.path = file_versions.path))
   WHERE repo_id = ? AND flow_path = ? AND replaced_at IS NULL AND path IN (${parameterList(count)})`,
);

const ADD_VERSIONS = textPerCount(
  (count) => `INSERT INTO file_versions
     (repo_id, flow_path, path, hash, content, size, written_at, written_by, writer_kind, member_id, token_id)
   VALUES ${valueRows(count, 11)}`,
);

/** The channel a write of flow files notifies (Sql.notify): the change feed (store/changes.ts) listens to it. */
export const HISTORY_CHANNEL = 'flowsync_history';

/**
 * What writers of history take in turn, from their first version row to their commit, so that version numbers are
 * committed in their order: on Postgres a transaction that drew 10 could commit after one that drew 11, and a
 * reader of the change feed that saw 11 would have moved its cursor past 10 for good. SQLite has one writer anyway.
 */
const HISTORY_ORDER = 'history order';

/**
 * Every version of every flow file, the current one included, in one append-only table: a write marks the
 * version it replaces (`replaced_at`, and its content, taken from the file row) and adds its own, whose content
 * stays in the file row while it is current; a deletion adds a tombstone (no hash, no content). Pruning
 * removes only replaced versions (and tombstones) past the retention, never what a file holds now. Not a
 * transaction itself: the function that writes wraps the whole call in one, history included.
 */
export class FileHistory {
  constructor(private readonly sql: Sql) {}

  async current(repoId: string, flowPath: string, path: string): Promise<CurrentVersion | null> {
    const found = await this.sql.get<Omit<CurrentVersion, 'member'> & MemberColumns>(
      `SELECT v.version, v.hash, v.written_at, v.written_by, v.member_id, ${MEMBER_COLUMNS}
       FROM file_versions v LEFT JOIN members m ON m.id = v.member_id
       WHERE v.repo_id = ? AND v.flow_path = ? AND v.path = ? AND v.replaced_at IS NULL`,
      [repoId, flowPath, path],
    );
    if (!found) return null;
    const { version, hash, written_at, written_by } = found;
    return { version, hash, written_at, written_by, member: memberRef(found) };
  }

  /**
   * Records writes to files of one flow, before their file rows change: the version each file had is now replaced
   * and takes its content from that row (a new file has none). A new version keeps no content of its own while it
   * is current (the file row has it), so a file's content is stored once: history roughly halved ingest when it
   * was stored twice (bench/service.ts). `written` null records a deletion (a tombstone).
   */
  async record(
    flow: { repoId: string; flowId: string; flowPath: string },
    writes: readonly { path: string; written: { hash: string; size: number } | null }[],
    writer: Writer,
    now = nowIso(),
  ): Promise<void> {
    if (writes.length === 0) return;
    await this.sql.lock(HISTORY_ORDER);
    await this.sql.notify(HISTORY_CHANNEL);
    for (const part of chunks(writes)) {
      const replaced: unknown[] = [now, flow.flowId, flow.repoId, flow.flowPath];
      const added: unknown[] = [];
      for (const { path, written } of part) {
        replaced.push(path);
        added.push(flow.repoId, flow.flowPath, path, written?.hash ?? null, null, written?.size ?? 0, now);
        added.push(writer.name, writer.kind, writer.memberId, writer.tokenId);
      }
      await this.sql.run(REPLACE_VERSIONS(part.length), replaced);
      await this.sql.run(ADD_VERSIONS(part.length), added);
    }
  }

  /**
   * A page of a repository's files whose current version is a deletion, by flow and path after the (flow, path)
   * given: who deleted each and when.
   */
  async deleted(repoId: string, page: { after: [string, string] | null; limit: number }) {
    const rows = await this.sql.all<
      { flow_path: string; path: string; deleted_at: string; deleted_by: string | null } & MemberColumns
    >(
      `SELECT v.flow_path, v.path, v.written_at AS deleted_at, v.written_by AS deleted_by, v.member_id,
         ${MEMBER_COLUMNS}
       FROM file_versions v LEFT JOIN members m ON m.id = v.member_id
       WHERE v.repo_id = @repoId AND v.replaced_at IS NULL AND v.hash IS NULL
         AND (v.flow_path > @afterFlow OR (v.flow_path = @afterFlow AND v.path > @afterPath))
       ORDER BY v.flow_path, v.path LIMIT @limit`,
      { repoId, afterFlow: page.after?.[0] ?? '', afterPath: page.after?.[1] ?? '', limit: page.limit },
    );
    return rows.map(({ flow_path, path, deleted_at, deleted_by, ...member }) => ({
      flow_path,
      path,
      deleted_at,
      deleted_by,
      deleted_by_member: memberRef(member),
    }));
  }

  /**
   * Keeps a checkout's bytes of a file as a version that was never current (`replaced_at` is now, so the history's
   * retention applies to it as to any replaced version), marked as its conflict copy: the file itself is unchanged.
   */
  async keepCopy(
    file: { repoId: string; flowPath: string; path: string },
    copy: { hash: string; content: string; size: number },
    writer: Writer,
    memberBytes: number,
    now = nowIso(),
  ): Promise<number> {
    // A member's conflict copies of one repository stay within `memberBytes`: their oldest go to make
    // room, never another member's copies nor any file's versions. Counted under a lock per repository and member
    // (two of their checkouts keeping copies at once on Postgres would each count without the other's).
    await this.sql.lock(`conflict copies ${file.repoId} ${writer.memberId ?? ''}`);
    const kept = await this.sql.all<{ version: number | string; size: number }>(
      `SELECT version, size FROM file_versions
       WHERE repo_id = ? AND conflict_copy = 1 AND coalesce(member_id, '') = ? ORDER BY version`,
      [file.repoId, writer.memberId ?? ''],
    );
    let total = kept.reduce((sum, row) => sum + Number(row.size), 0);
    for (const { version, size } of kept) {
      if (total + copy.size <= memberBytes) break;
      await this.sql.run('DELETE FROM file_versions WHERE version = ?', [Number(version)]);
      total -= Number(size);
    }
    // The row this call inserted, not the file's newest copy: on Postgres two members' copies of one file are
    // kept at once (each under their own lock), and max(version) told one of them the other's number.
    const added = await this.sql.get<{ version: number | string }>(
      `INSERT INTO file_versions
         (repo_id, flow_path, path, hash, content, size, written_at, written_by, writer_kind, replaced_at, conflict_copy,
          member_id, token_id)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1, ?, ?)
       RETURNING version`,
      [
        file.repoId,
        file.flowPath,
        file.path,
        copy.hash,
        copy.content,
        copy.size,
        now,
        writer.name,
        writer.kind,
        now,
        writer.memberId,
        writer.tokenId,
      ],
    );
    return Number(added!.version);
  }

  /** A file's versions, newest first: `limit` of them, older than `before` (a version number) when given. */
  async versions(
    repoId: string,
    flowPath: string,
    path: string,
    page: { before: number | null; limit: number },
  ): Promise<FileVersion[]> {
    const rows = await this.sql.all<
      {
        version: number;
        hash: string | null;
        size: number;
        written_at: string;
        written_by: string | null;
        writer_kind: FileVersion['writer_kind'];
        current: number;
        conflict_copy: number | null;
      } & MemberColumns
    >(
      `SELECT v.version, v.hash, v.size, v.written_at, v.written_by, v.writer_kind, v.conflict_copy, v.member_id,
         ${MEMBER_COLUMNS}, CASE WHEN v.replaced_at IS NULL THEN 1 ELSE 0 END AS current
       FROM file_versions v LEFT JOIN members m ON m.id = v.member_id
       WHERE v.repo_id = ? AND v.flow_path = ? AND v.path = ? AND v.version < ?
       ORDER BY v.version DESC LIMIT ?`,
      [repoId, flowPath, path, page.before ?? Number.MAX_SAFE_INTEGER, page.limit],
    );
    return rows.map(
      ({ conflict_copy: copy, member_id, member_name, member_shared, member_removed_at, ...row }) => ({
        ...row,
        member: memberRef({ member_id, member_name, member_shared, member_removed_at }),
        current: row.current === 1,
        ...(copy === 1 && { conflict_copy: true }),
      }),
    );
  }

  async version(version: number): Promise<StoredVersion | null> {
    const found = await this.sql.get<StoredVersion>(
      'SELECT version, repo_id, flow_path, path, hash, content FROM file_versions WHERE version = ?',
      [version],
    );
    if (!found) return null;
    // A current version's content is the file's own.
    if (found.content === null && found.hash !== null) {
      const file = await this.sql.get<{ content: string }>(
        `SELECT f.content FROM flow_files f JOIN flows fl ON fl.id = f.flow_id
         WHERE fl.repo_id = ? AND fl.flow_path = ? AND f.path = ?`,
        [found.repo_id, found.flow_path, found.path],
      );
      found.content = file?.content ?? null;
    }
    return found;
  }

  /**
   * An operator's purge: removes a file's replaced versions (all, or `version` alone), never its current one, and
   * records a tombstone of it (who, when, how many) when it removed any. Their content goes with the rows; on
   * SQLite its bytes may stay in the file's free pages until they are reused or the file is vacuumed, on Postgres
   * in dead tuples until VACUUM. Not a transaction itself, as `record`.
   */
  async purge(
    file: { repoId: string; flowPath: string; path: string },
    version: number | null,
    purgedBy: string | null,
    memberId: string | null,
    now = nowIso(),
  ): Promise<HistoryPurge> {
    const where = `repo_id = ? AND flow_path = ? AND path = ? AND replaced_at IS NOT NULL`;
    const params: unknown[] = [file.repoId, file.flowPath, file.path];
    const removed =
      version === null
        ? await this.sql.run(`DELETE FROM file_versions WHERE ${where}`, params)
        : await this.sql.run(`DELETE FROM file_versions WHERE ${where} AND version = ?`, [
            ...params,
            version,
          ]);
    if (removed > 0)
      await this.sql.run(
        `INSERT INTO history_purges (repo_id, flow_path, path, version, versions, purged_at, purged_by, member_id)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
        [file.repoId, file.flowPath, file.path, version, removed, now, purgedBy, memberId],
      );
    const by =
      memberId === null
        ? null
        : await this.sql.get<MemberColumns>(
            `SELECT m.id AS member_id, ${MEMBER_COLUMNS} FROM members m WHERE m.id = ?`,
            [memberId],
          );
    return {
      version,
      versions: removed,
      purged_at: now,
      purged_by: purgedBy,
      purged_by_member: by ? memberRef(by) : null,
    };
  }

  /** A file's purges, newest first (a few at most: each is an operator's deliberate act). */
  async purges(repoId: string, flowPath: string, path: string): Promise<HistoryPurge[]> {
    const rows = await this.sql.all<
      {
        version: number | null;
        versions: number;
        purged_at: string;
        purged_by: string | null;
      } & MemberColumns
    >(
      `SELECT p.version, p.versions, p.purged_at, p.purged_by, p.member_id, ${MEMBER_COLUMNS}
       FROM history_purges p LEFT JOIN members m ON m.id = p.member_id
       WHERE p.repo_id = ? AND p.flow_path = ? AND p.path = ? ORDER BY p.id DESC LIMIT 100`,
      [repoId, flowPath, path],
    );
    return rows.map(({ member_id, member_name, member_shared, member_removed_at, ...purge }) => ({
      ...purge,
      purged_by_member: memberRef({ member_id, member_name, member_shared, member_removed_at }),
    }));
  }

  /**
   * Removes what is past the retention; returns how many versions went, and each size-cap cut (which repository,
   * how many versions, and the members whose writes added the most bytes to it in the hour before: who filled it).
   */
  async prune(
    retention: HistoryRetention,
    now = Date.now(),
  ): Promise<{
    removed: number;
    cuts: { repo: string; versions: number; filledBy: { member: string; bytes: number }[] }[];
  }> {
    const cuts: { repo: string; versions: number; filledBy: { member: string; bytes: number }[] }[] = [];
    const cutoff = new Date(now - retention.days * 86_400_000).toISOString();
    let removed = await this.sql.run(
      `DELETE FROM file_versions WHERE (replaced_at IS NOT NULL AND replaced_at < @cutoff)
         OR (replaced_at IS NULL AND hash IS NULL AND written_at < @cutoff)`,
      { cutoff },
    );
    const over = await this.sql.all<{ repo_id: string; bytes: number }>(
      `SELECT repo_id, sum(size) AS bytes FROM file_versions WHERE replaced_at IS NOT NULL
       GROUP BY repo_id HAVING sum(size) > ?`,
      [retention.bytes],
    );
    for (const { repo_id } of over) {
      // One pruning at a time per repository (two processes on one Postgres prune at once): measured again under
      // the lock, or both would remove the same excess and the history would lose twice what the cap asks.
      await this.sql.lock(`history cap ${repo_id}`);
      const measured = await this.sql.get<{ bytes: number | null }>(
        'SELECT sum(size) AS bytes FROM file_versions WHERE repo_id = ? AND replaced_at IS NOT NULL',
        [repo_id],
      );
      let excess = Number(measured?.bytes ?? 0) - retention.bytes;
      let capped = 0;
      // Whose writes of the last hour filled it, read before the cut removes any of them.
      const filledBy =
        excess > 0
          ? await this.sql.all<{ member: string; bytes: number | string }>(
              `SELECT coalesce(m.name, v.member_id, 'before members') AS member, sum(v.size) AS bytes
               FROM file_versions v LEFT JOIN members m ON m.id = v.member_id
               WHERE v.repo_id = ? AND v.written_at >= ?
               GROUP BY coalesce(m.name, v.member_id, 'before members') ORDER BY sum(v.size) DESC LIMIT 3`,
              [repo_id, new Date(now - 3_600_000).toISOString()],
            )
          : [];
      // First the conflict copies, oldest first: they were never any file's content on the service, and each is rank
      // 1 of its own path, so the ranks below never reach them; before, two large copies took another file from 8
      // versions to 1 (measured with a 2-member team).
      while (excess > 0) {
        const copies = await this.sql.all<{ version: number; size: number }>(
          `SELECT version, size FROM file_versions WHERE repo_id = ? AND conflict_copy = 1
           ORDER BY replaced_at, version LIMIT 500`,
          [repo_id],
        );
        if (copies.length === 0) break;
        for (const { version, size } of copies) {
          if (excess <= 0) break;
          await this.sql.run('DELETE FROM file_versions WHERE version = ?', [version]);
          excess -= size;
          capped++;
        }
      }
      // First what is older than every file's last KEEP_PER_FILE versions, oldest first; only then, if that is not
      // enough, each file's next-oldest in turn, one rank at a time (oldest-first over the repository lets one busy
      // file push out every other file's history). A file's current version is never removed.
      for (let keep = KEEP_PER_FILE; keep >= 1; keep--) {
        while (excess > 0) {
          const oldest = await this.sql.all<{ version: number; size: number }>(
            `SELECT version, size FROM (
               SELECT version, size, replaced_at,
                 ROW_NUMBER() OVER (PARTITION BY flow_path, path ORDER BY version DESC) AS newest
               FROM file_versions WHERE repo_id = ?
             ) v WHERE replaced_at IS NOT NULL AND newest > ? ORDER BY replaced_at, version LIMIT 500`,
            [repo_id, keep],
          );
          if (oldest.length === 0) break;
          for (const { version, size } of oldest) {
            if (excess <= 0) break;
            await this.sql.run('DELETE FROM file_versions WHERE version = ?', [version]);
            excess -= size;
            capped++;
          }
        }
      }
      if (capped > 0) {
        removed += capped;
        // Said in `history` and the window: "older versions … were removed at the 256 MiB cap on …".
        await this.sql.run(
          `INSERT INTO history_pruned (repo_id, pruned_at, cap_bytes, versions) VALUES (?, ?, ?, ?)
           ON CONFLICT (repo_id) DO UPDATE SET pruned_at = excluded.pruned_at, cap_bytes = excluded.cap_bytes,
             versions = history_pruned.versions + excluded.versions`,
          [repo_id, new Date(now).toISOString(), retention.bytes, capped],
        );
        const repo = await this.sql.get<{ owner: string; name: string }>(
          'SELECT owner, name FROM repos WHERE id = ?',
          [repo_id],
        );
        cuts.push({
          repo: repo ? `${repo.owner}/${repo.name}` : repo_id,
          versions: capped,
          filledBy: filledBy.map((row) => ({ member: row.member, bytes: Number(row.bytes) })),
        });
      }
    }
    return { removed, cuts };
  }

  /** When the size cap last removed versions of this repository (null: never), for `file_versions`. */
  async lastCapped(repoId: string): Promise<{ at: string; cap_bytes: number } | null> {
    const found = await this.sql.get<{ at: string; cap_bytes: number }>(
      'SELECT pruned_at AS at, cap_bytes FROM history_pruned WHERE repo_id = ?',
      [repoId],
    );
    return found ? { at: found.at, cap_bytes: Number(found.cap_bytes) } : null;
  }
}
