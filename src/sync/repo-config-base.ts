import type Database from 'better-sqlite3';
import { repoConfigCurrentSchema, type RepoConfigCurrent } from '../protocol/index.ts';

/**
 * One repository's config as this checkout last synced it with its service (the state's `repo_config` row): the
 * base its next update names, and the conflict a stale one was refused with, until its user settles it.
 */
export class RepoConfigBase {
  constructor(
    private readonly db: Database.Database,
    private readonly repoId: number,
  ) {}

  /** The hash of the config last synced; null: none yet (the service is believed to have none). */
  base(): string | null {
    return this.row()?.base_hash ?? null;
  }

  /** The service's config a write was refused for, or null. A row that does not parse is no conflict. */
  conflict(): RepoConfigCurrent | null {
    const text = this.row()?.conflict;
    if (!text) return null;
    const parsed = repoConfigCurrentSchema.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : null;
  }

  /** The service took (or holds) this config: it is the new base, and no conflict stands. */
  synced(hash: string): void {
    this.db
      .prepare(
        `INSERT INTO repo_config (repo_id, base_hash, conflict) VALUES (?, ?, NULL)
         ON CONFLICT (repo_id) DO UPDATE SET base_hash = excluded.base_hash, conflict = NULL`,
      )
      .run(this.repoId, hash);
  }

  /** The service refused a write for this config of its own: kept until its user says which to keep. */
  recordConflict(current: RepoConfigCurrent): void {
    this.db
      .prepare(
        `INSERT INTO repo_config (repo_id, base_hash, conflict) VALUES (?, NULL, ?)
         ON CONFLICT (repo_id) DO UPDATE SET conflict = excluded.conflict`,
      )
      .run(this.repoId, JSON.stringify(current));
  }

  private row(): { base_hash: string | null; conflict: string | null } | undefined {
    return this.db
      .prepare('SELECT base_hash, conflict FROM repo_config WHERE repo_id = ?')
      .get(this.repoId) as { base_hash: string | null; conflict: string | null } | undefined;
  }
}
