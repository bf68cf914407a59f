import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { ServiceDatabase } from '../db/open.ts';
import { nowIso } from '../clock.ts';
import { sha256Hex } from '../hash.ts';

export type Caller = 'user' | 'admin';

export interface IssuedTokens {
  user: string;
  admin: string;
}

/**
 * The service's access tokens. Only their SHA-256 is stored; the tokens themselves exist once, in the reply to
 * `issueIfNone`, which the first start prints and then forgets. Each process keeps the digests in memory (a call
 * is admitted before its body is read, without a query) and reads them again every `RELOAD_MS`, so that tokens
 * reissued by another process on the same database are taken, and the old ones refused, within that time.
 */
export class AccessTokens {
  private digests: { kind: Caller; digest: Buffer }[] = [];

  constructor(private readonly db: ServiceDatabase) {}

  /** Creates a user and an admin token when the database has none; returns them, or null when they exist. */
  async issueIfNone(): Promise<IssuedTokens | null> {
    const tokens = await this.db.transaction(async (sql) => {
      const { n } = (await sql.get<{ n: number }>('SELECT count(*) AS n FROM access_tokens'))!;
      if (n > 0) return null;
      const issued = { user: newToken('fsu'), admin: newToken('fsa') };
      for (const [kind, token] of [
        ['user', issued.user],
        ['admin', issued.admin],
      ] as const) {
        await sql.run('INSERT INTO access_tokens (kind, sha256, created_at) VALUES (?, ?, ?)', [
          kind,
          sha256Hex(token),
          nowIso(),
        ]);
      }
      return issued;
    });
    await this.reload();
    return tokens;
  }

  /** Replaces every token with a new pair (for an operator who lost them); the old ones stop working at once. */
  async reissue(): Promise<IssuedTokens> {
    await this.db.transaction((sql) => sql.run('DELETE FROM access_tokens'));
    const tokens = await this.issueIfNone();
    if (!tokens) throw new Error('tokens were not reissued');
    return tokens;
  }

  /** Who presents this token, compared in constant time against every stored digest; null when nobody. */
  identify(token: string): Caller | null {
    const presented = Buffer.from(sha256Hex(token), 'hex');
    let found: Caller | null = null;
    for (const { kind, digest } of this.digests) {
      if (timingSafeEqual(presented, digest) && found === null) found = kind;
    }
    return found;
  }

  /** Reads the digests again (at start, after a change, and now and then for the changes of other processes). */
  async reload(): Promise<void> {
    const rows = await this.db.read((sql) =>
      sql.all<{ kind: Caller; sha256: string }>('SELECT kind, sha256 FROM access_tokens'),
    );
    this.digests = rows.map((row) => ({ kind: row.kind, digest: Buffer.from(row.sha256, 'hex') }));
  }
}

function newToken(prefix: string): string {
  return `${prefix}_${randomBytes(32).toString('base64url')}`;
}
