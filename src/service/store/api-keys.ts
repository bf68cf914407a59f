import type { KeyActivityPayload } from '../../protocol/index.ts';
import type { ServiceDatabase } from '../db/open.ts';
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
  private readonly insert;
  private readonly byHash;

  constructor(db: ServiceDatabase) {
    this.insert = db.prepare(
      `INSERT INTO api_keys (hash, api_key_tid, name, prefix_4, suffix_4, user_id, created_at)
       VALUES (@hash, @api_key_tid, @name, @prefix_4, @suffix_4, @user_id, @created_at)
       ON CONFLICT (hash) DO UPDATE SET user_id = excluded.user_id, api_key_tid = excluded.api_key_tid,
         name = excluded.name
       WHERE api_keys.user_id != excluded.user_id`,
    );
    this.byHash = db.prepare(
      'SELECT hash, api_key_tid, name, prefix_4, suffix_4, user_id FROM api_keys WHERE hash = ?',
    );
  }

  /**
   * Registers a key to a user; returns true when it was new or now belongs to another user. A later key-created
   * that names another user moves the key (only an operator logs one): how a key registered to a name the tracker
   * does not use (an OS user name) comes to its owner. The same user again changes nothing.
   */
  register(apiKeyTid: string, payload: KeyActivityPayload): boolean {
    const { changes } = this.insert.run({
      hash: payload.hash,
      api_key_tid: apiKeyTid,
      name: payload.name,
      prefix_4: payload.prefix_4,
      suffix_4: payload.suffix_4,
      user_id: payload.user_id,
      created_at: nowIso(),
    });
    return changes > 0;
  }

  /** The registered key whose secret this is, or null. */
  findBySecret(secret: string): RegisteredApiKey | null {
    return (this.byHash.get(sha256Hex(secret)) as RegisteredApiKey | undefined) ?? null;
  }
}
