import type { KeyActivityPayload } from '../../protocol/index.ts';
import type { Sql } from '../db/open.ts';
import { nowIso } from '../clock.ts';
import { sha256Hex } from '../hash.ts';

export interface RegisteredApiKey {
  hash: string;
  api_key_tid: string;
  name: string;
  prefix_4: string;
  suffix_4: string;
  user_id: string;
}

/**
 * Personal API keys known to the tracker actions, by the SHA-256 of their secret (decided: docs/architecture.md, "Personal API keys"). The secret
 * itself is never stored: a presented key is hashed and looked up.
 */
export class ApiKeys {
  constructor(private readonly sql: Sql) {}

  /**
   * Registers a key to a user; returns true when it was new or now belongs to another user. A later key-created
   * that names another user moves the key (only an operator logs one): how a key registered to a name the tracker
   * does not use (an OS user name) comes to its owner. The same user again changes nothing.
   */
  async register(apiKeyTid: string, payload: KeyActivityPayload): Promise<boolean> {
    const changes = await this.sql.run(
      `INSERT INTO api_keys (hash, api_key_tid, name, prefix_4, suffix_4, user_id, created_at)
       VALUES (@hash, @api_key_tid, @name, @prefix_4, @suffix_4, @user_id, @created_at)
       ON CONFLICT (hash) DO UPDATE SET user_id = excluded.user_id, api_key_tid = excluded.api_key_tid,
         name = excluded.name
       WHERE api_keys.user_id != excluded.user_id`,
      {
        hash: payload.hash,
        api_key_tid: apiKeyTid,
        name: payload.name,
        prefix_4: payload.prefix_4,
        suffix_4: payload.suffix_4,
        user_id: payload.user_id,
        created_at: nowIso(),
      },
    );
    return changes > 0;
  }

  /** The registered key whose secret this is, or null. */
  async findBySecret(secret: string): Promise<RegisteredApiKey | null> {
    const found = await this.sql.get<RegisteredApiKey>(
      'SELECT hash, api_key_tid, name, prefix_4, suffix_4, user_id FROM api_keys WHERE hash = ?',
      [sha256Hex(secret)],
    );
    return found ?? null;
  }
}
