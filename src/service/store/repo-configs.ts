import type { RepoConfig, RepoConfigRecord } from '../../protocol/index.ts';
import type { ServiceDatabase } from '../db/open.ts';
import { nowIso } from '../clock.ts';

/** Repository configurations by owner and name; an update replaces the whole document. */
export class RepoConfigStore {
  private readonly upsert;

  constructor(db: ServiceDatabase) {
    this.upsert = db.prepare(
      `INSERT INTO repo_configs (owner, name, config, updated_at) VALUES (?, ?, ?, ?)
       ON CONFLICT (owner, name) DO UPDATE SET config = excluded.config, updated_at = excluded.updated_at`,
    );
  }

  replace(owner: string, name: string, config: RepoConfig): RepoConfigRecord {
    const updatedAt = nowIso();
    this.upsert.run(owner, name, JSON.stringify(config), updatedAt);
    return { ...config, owner, name, updated_at: updatedAt };
  }
}
