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
 * `issueIfNone`, which the first start prints and then forgets.
 */
export class AccessTokens {
  private digests: { kind: Caller; digest: Buffer }[] = [];

  constructor(private readonly db: ServiceDatabase) {
    this.reload();
  }

  /** Creates a user and an admin token when the database has none; returns them, or null when they exist. */
  issueIfNone(): IssuedTokens | null {
    const issue = this.db.transaction((): IssuedTokens | null => {
      const { n } = this.db.prepare('SELECT count(*) AS n FROM access_tokens').get() as { n: number };
      if (n > 0) return null;
      const tokens = { user: newToken('fsu'), admin: newToken('fsa') };
      const insert = this.db.prepare('INSERT INTO access_tokens (kind, sha256, created_at) VALUES (?, ?, ?)');
      insert.run('user', sha256Hex(tokens.user), nowIso());
      insert.run('admin', sha256Hex(tokens.admin), nowIso());
      return tokens;
    });
    const tokens = issue();
    this.reload();
    return tokens;
  }

  /** Replaces every token with a new pair (for an operator who lost them); the old ones stop working at once. */
  reissue(): IssuedTokens {
    this.db.prepare('DELETE FROM access_tokens').run();
    const tokens = this.issueIfNone();
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

  private reload(): void {
    const rows = this.db.prepare('SELECT kind, sha256 FROM access_tokens').all() as {
      kind: Caller;
      sha256: string;
    }[];
    this.digests = rows.map((row) => ({ kind: row.kind, digest: Buffer.from(row.sha256, 'hex') }));
  }
}

function newToken(prefix: string): string {
  return `${prefix}_${randomBytes(32).toString('base64url')}`;
}
