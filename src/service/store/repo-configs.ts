import {
  repoConfigHashInput,
  type RepoConfig,
  type RepoConfigCurrent,
  type RepoConfigRecord,
} from '../../protocol/index.ts';
import type { Sql } from '../db/open.ts';
import { nowIso } from '../clock.ts';
import { sha256Hex } from '../hash.ts';

/** The hash a write names as its base: SHA-256 of the config's canonical JSON (repoConfigHashInput). */
export function repoConfigHash(config: RepoConfig): string {
  return sha256Hex(repoConfigHashInput(config));
}

/** Repository configurations by owner and name; an update replaces the whole document. */
export class RepoConfigStore {
  constructor(private readonly sql: Sql) {}

  /**
   * Replaces the config, or, given a base (`base` null: the writer believes there is none), only when the stored
   * config is that base or already the one sent: otherwise nothing is written and the stored one is returned as
   * `conflict`. Writers of one repository's config take turns (lock), so each compares with what the last wrote.
   */
  async replace(
    owner: string,
    name: string,
    config: RepoConfig,
    writer: { name: string | null; memberId: string | null },
    base?: string | null,
  ): Promise<RepoConfigRecord | { conflict: RepoConfigCurrent }> {
    const hash = repoConfigHash(config);
    if (base !== undefined) {
      await this.sql.lock(`repo_config ${owner} ${name}`);
      const stored = await this.current(owner, name);
      const storedHash = stored?.hash ?? null;
      if (stored && storedHash === hash) return stored;
      if (storedHash !== base && stored) return { conflict: stored };
      // No config stored while the writer names one: it was removed (an import of an older export); write.
    }
    const updatedAt = nowIso();
    await this.sql.run(
      `INSERT INTO repo_configs (owner, name, config, updated_at, written_by, member_id) VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT (owner, name) DO UPDATE SET config = excluded.config, updated_at = excluded.updated_at,
         written_by = excluded.written_by, member_id = excluded.member_id`,
      [owner, name, JSON.stringify(config), updatedAt, writer.name, writer.memberId],
    );
    return { ...config, owner, name, updated_at: updatedAt, hash, written_by: writer.name };
  }

  private async current(owner: string, name: string): Promise<RepoConfigCurrent | null> {
    const row = await this.sql.get<{ config: string; updated_at: string; written_by: string | null }>(
      'SELECT config, updated_at, written_by FROM repo_configs WHERE owner = ? AND name = ?',
      [owner, name],
    );
    if (!row) return null;
    const config = JSON.parse(row.config) as RepoConfig;
    return {
      ...config,
      owner,
      name,
      updated_at: row.updated_at,
      hash: repoConfigHash(config),
      written_by: row.written_by,
    };
  }
}
