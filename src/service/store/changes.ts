import type { FlowChange } from '../../protocol/index.ts';
import type { Sql } from '../db/open.ts';
import { parameterList } from '../db/rows.ts';

/** A repository as `changes` names it. */
export interface RepoName {
  repo_owner: string;
  repo_name: string;
}

/**
 * The change feed, read from the history: every write of a flow file adds a version row, numbered in commit order
 * (file-history.ts's HISTORY_ORDER), so "the flows written after version N" is a range of the history's primary
 * key, and no table of its own is written. Conflict copies are not changes of a flow (its files are as they were).
 * What pruning removes is older than the retention (a cursor that old is a gap) or a replaced version, whose file
 * has a newer row that still names the flow.
 */
export class ChangeStore {
  constructor(private readonly sql: Sql) {}

  /** The newest version number of the history (0: none). */
  async newest(): Promise<number> {
    const found = await this.sql.get<{ newest: number | null }>(
      'SELECT max(version) AS newest FROM file_versions',
    );
    return Number(found?.newest ?? 0);
  }

  /** Whether a flow of these repositories was written after version `after` (what wakes a waiting call). */
  async changedRepos(after: number): Promise<{ keys: Set<string>; newest: number }> {
    const rows = await this.sql.all<{ owner: string; name: string; newest: number }>(
      `SELECT r.owner, r.name, max(v.version) AS newest FROM file_versions v JOIN repos r ON r.id = v.repo_id
       WHERE v.version > ? AND v.conflict_copy IS NULL GROUP BY r.owner, r.name`,
      [after],
    );
    let newest = after;
    for (const row of rows) newest = Math.max(newest, Number(row.newest));
    return { keys: new Set(rows.map((row) => repoKey(row.owner, row.name))), newest };
  }

  /**
   * The flows of these repositories written after version `after`, each once with its aggregate hash now and who
   * wrote its newest version, oldest change first, at most `limit`; `through` is the newest version the answer
   * covers (the last flow's when it stopped at `limit`).
   */
  async since(
    repos: readonly RepoName[],
    after: number,
    limit: number,
  ): Promise<{ changes: FlowChange[]; through: number | null; more: boolean }> {
    const ids: string[] = [];
    for (const repo of repos) {
      const found = await this.sql.get<{ id: string }>('SELECT id FROM repos WHERE owner = ? AND name = ?', [
        repo.repo_owner,
        repo.repo_name,
      ]);
      if (found) ids.push(found.id);
    }
    if (ids.length === 0) return { changes: [], through: null, more: false };
    const rows = await this.sql.all<{
      repo_owner: string;
      repo_name: string;
      flow_path: string;
      version: number;
      written_by: string | null;
      hash: string | null;
      files: number | null;
    }>(
      `SELECT c.repo_owner, c.repo_name, c.flow_path, c.version, w.written_by, fl.hash,
         (SELECT count(*) FROM flow_files ff WHERE ff.flow_id = fl.id) AS files
       FROM (
         SELECT r.id AS repo_id, r.owner AS repo_owner, r.name AS repo_name, v.flow_path, max(v.version) AS version
         FROM file_versions v JOIN repos r ON r.id = v.repo_id
         WHERE v.version > ? AND v.conflict_copy IS NULL AND v.repo_id IN (${parameterList(ids.length)})
         GROUP BY r.id, r.owner, r.name, v.flow_path
       ) c
       JOIN file_versions w ON w.version = c.version
       LEFT JOIN flows fl ON fl.repo_id = c.repo_id AND fl.flow_path = c.flow_path
       ORDER BY c.version LIMIT ?`,
      [after, ...ids, limit + 1],
    );
    const more = rows.length > limit;
    const page = more ? rows.slice(0, limit) : rows;
    return {
      changes: page.map((row) => ({
        repo_owner: row.repo_owner,
        repo_name: row.repo_name,
        flow_path: row.flow_path,
        hash: Number(row.files ?? 0) > 0 ? row.hash : null,
        written_by: row.written_by,
      })),
      through: page.length > 0 ? Number(page.at(-1)!.version) : null,
      more,
    };
  }
}

/** One key per repository, for matching a waiting call with what changed. */
export function repoKey(owner: string, name: string): string {
  return `${owner}\0${name}`;
}
