import type { Caller } from '../store/access-tokens.ts';

/** The scheme word of each kind of caller (the spec's `Bearer` and, for operators, `Admin`). */
const SCHEMES: Record<string, Caller> = { bearer: 'user', admin: 'admin' };

/** Splits an `Authorization` header into who it claims to be and the token; null when it is not one of ours. */
export function parseAuthorization(header: string | undefined): { claimed: Caller; token: string } | null {
  if (!header) return null;
  const match = /^(\S+)\s+(\S+)\s*$/.exec(header);
  if (!match) return null;
  const claimed = SCHEMES[match[1]!.toLowerCase()];
  return claimed ? { claimed, token: match[2]! } : null;
}
