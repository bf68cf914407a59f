import type { RepoConfig, RepoConfigRecord } from '../../protocol/index.ts';
import type { Sql } from '../db/open.ts';
import { nowIso } from '../clock.ts';

/** Repository configurations by owner and name; an update replaces the whole document. */
export class RepoConfigStore {
  constructor(private readonly sql: Sql) {}

  async replace(owner: string, name: string, config: RepoConfig): Promise<RepoConfigRecord> {
    const updatedAt = nowIso();
    await this.sql.run(
      `INSERT INTO repo_configs (owner, name, config, updated_at) VALUES (?, ?, ?, ?)
       ON CONFLICT (owner, name) DO UPDATE SET config = excluded.config, updated_at = excluded.updated_at`,
      [owner, name, JSON.stringify(config), updatedAt],
    );
    return { ...config, owner, name, updated_at: updatedAt };
  }
}
