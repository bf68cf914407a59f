import { z } from 'zod';
import { baggageSchema, isoTimeSchema } from './common.ts';

/*
 * The members of a team's service: each person has their own token, obtained through a one-time invite,
 * and a role. Here are the pure parts every layer shares: the roles and what each may call, the token format (a
 * prefix, a public id, 256 random bits, a checksum), the names, and the wire of the member functions.
 */

/** What a member may do: read (everything that changes nothing), write (today's user token), operator (all). */
export const ROLES = ['read', 'write', 'operator'] as const;
export type Role = (typeof ROLES)[number];
export const roleSchema = z.enum(ROLES);

/**
 * What a function needs: a role; `own` (any member's token, acting on that token alone: renew_token, which changes
 * a row and so is not `read`); or `invite` (redeem_invite, the one function an invite opens and the only one it
 * opens). Every function has one, in the function table (functions.ts).
 */
export type Scope = Role | 'own' | 'invite';

const RANK: Record<Role, number> = { read: 0, write: 1, operator: 2 };

/** Whether a credential acting at `level` may call a function of `scope`. An invite opens nothing but its own. */
export function levelAllows(level: Role, scope: Scope): boolean {
  if (scope === 'own') return true;
  return scope !== 'invite' && RANK[level] >= RANK[scope];
}

/** The narrower of two roles: what a token of one scope held by a member of another role may do. */
export function narrowerRole(a: Role, b: Role): Role {
  return RANK[a] <= RANK[b] ? a : b;
}

/**
 * A member's name: safe in a terminal, a log and a shell (`^[a-z0-9][a-z0-9._-]{0,39}$`). `shared`,
 * `shared-operator` (the shared tokens' members), `local` and `system` are taken.
 */
export const MEMBER_NAME = /^[a-z0-9][a-z0-9._-]{0,39}$/;
export const RESERVED_MEMBER_NAMES: readonly string[] = ['shared', 'shared-operator', 'local', 'system'];

/** Why a name cannot be a new member's, or null when it can. */
export function memberNameProblem(name: string): string | null {
  if (!MEMBER_NAME.test(name))
    return `"${name.slice(0, 60)}" is not a member name: 1 to 40 of a-z, 0-9, ".", "_", "-", starting with a letter or digit.`;
  if (RESERVED_MEMBER_NAMES.includes(name)) return `"${name}" is a name the service keeps for itself.`;
  return null;
}

/**
 * The member name of an OS user (the embedded service's one member): lower case, each character a name
 * cannot have a "-", at most 40; `owner` when nothing of it is left, or it is a name the service keeps.
 */
export function memberNameOf(user: string): string {
  const name = user
    .toLowerCase()
    .replace(/[^a-z0-9._-]/g, '-')
    .replace(/^[^a-z0-9]+/, '')
    .slice(0, 40);
  return name === '' || memberNameProblem(name) !== null ? 'owner' : name;
}

// ---- Tokens ----

/**
 * `fsm_<id>_<secret><checksum>`: a member token; `fsi_…` an invite, same shape. The id (10 base62) is public: how
 * the service finds the row without a scan, and how lists, logs and the audit name a token. The secret is 43
 * base62 (≈ 256 bits). The checksum (CRC32 of everything before it, 6 base62) lets a paste cut short or mistyped
 * be refused at once, with no call, and a token be recognised inside a file. base62 and `_`: a double-click selects
 * the whole token (GitHub's reason for its own format).
 */
export const TOKEN_PREFIXES = { member: 'fsm', invite: 'fsi' } as const;
export type TokenKind = keyof typeof TOKEN_PREFIXES;
export const TOKEN_ID_LENGTH = 10;
export const TOKEN_SECRET_LENGTH = 43;
export const TOKEN_CHECKSUM_LENGTH = 6;
/** 4 + 10 + 1 + 43 + 6. */
export const TOKEN_LENGTH = 64;

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const BASE62_RUN = /^[0-9A-Za-z]+$/;

/** Today's shared tokens (`fsu_` user, `fsa_` admin): still accepted, attributed to "shared token". */
export const LEGACY_TOKEN = /^fs[ua]_[A-Za-z0-9_-]{43}$/;

/** The whole token for an id and a secret (both base62, of their lengths), its checksum computed. */
export function formatToken(kind: TokenKind, id: string, secret: string): string {
  const body = `${TOKEN_PREFIXES[kind]}_${id}_${secret}`;
  return `${body}${checksumOf(body)}`;
}

export type ParsedToken =
  | { ok: true; kind: TokenKind; id: string }
  /**
   * `legacy`: a shared `fsu_`/`fsa_` token (no id, no checksum); `foreign`: not a flowsync token at all;
   * `truncated`: a flowsync token with characters missing or added; `mistyped`: the checksum does not match.
   */
  | { ok: false; problem: 'legacy' | 'foreign' | 'truncated' | 'mistyped' };

/** Reads a token's kind and public id, checking its shape and checksum; nothing here needs the service. */
export function parseToken(text: string): ParsedToken {
  if (LEGACY_TOKEN.test(text)) return { ok: false, problem: 'legacy' };
  const kind = (Object.keys(TOKEN_PREFIXES) as TokenKind[]).find((k) =>
    text.startsWith(`${TOKEN_PREFIXES[k]}_`),
  );
  if (!kind) return { ok: false, problem: 'foreign' };
  const match = /^fs[mi]_([0-9A-Za-z]{10})_([0-9A-Za-z]+)$/.exec(text);
  if (!match || text.length !== TOKEN_LENGTH) return { ok: false, problem: 'truncated' };
  const body = text.slice(0, TOKEN_LENGTH - TOKEN_CHECKSUM_LENGTH);
  if (checksumOf(body) !== text.slice(-TOKEN_CHECKSUM_LENGTH)) return { ok: false, problem: 'mistyped' };
  return { ok: true, kind, id: match[1]! };
}

/** What to tell a person who pasted something that is not a whole token (null: it is one, or a legacy one). */
export function tokenPasteProblem(text: string, expected: TokenKind): string | null {
  const parsed = parseToken(text);
  if (parsed.ok)
    return parsed.kind === expected
      ? null
      : expected === 'invite'
        ? 'That is a member token, not an invite: an invite starts with fsi_.'
        : 'That is an invite, not a token: redeem it with `flowsync login --invite`.';
  if (parsed.problem === 'legacy')
    return expected === 'invite' ? 'That is a shared token, not an invite.' : null;
  if (parsed.problem === 'foreign') return null;
  return parsed.problem === 'truncated'
    ? `That is not a whole flowsync ${expected === 'invite' ? 'invite' : 'token'}: it has ${text.length} characters of ${TOKEN_LENGTH} (was it cut short when copied?).`
    : `That flowsync ${expected === 'invite' ? 'invite' : 'token'} does not check out (a character is wrong): copy it again.`;
}

/** The header of every answer to a member token: when that token expires (ISO time), as GitHub's tokens say it. */
export const TOKEN_EXPIRES_HEADER = 'x-flowsync-token-expires';

/** A token as lists, logs and the audit name it: its prefix and public id, never enough to use it. */
export function tokenLabel(kind: TokenKind, id: string): string {
  return `${TOKEN_PREFIXES[kind]}_${id}…`;
}

/** Base62 of a 32-bit number, left-padded to the checksum's 6 characters. */
function checksumOf(body: string): string {
  let n = crc32(body);
  let out = '';
  for (let i = 0; i < TOKEN_CHECKSUM_LENGTH; i++) {
    out = BASE62[n % 62]! + out;
    n = Math.floor(n / 62);
  }
  return out;
}

/** Whether `text` is a run of base62 characters (an id or a secret as the service makes them). */
export function isBase62(text: string): boolean {
  return BASE62_RUN.test(text);
}

/** Base62 characters from random bytes: a byte of 248 or more is dropped, so each character is equally likely. */
export function base62FromBytes(bytes: Uint8Array, length: number): string | null {
  let out = '';
  for (const byte of bytes) {
    if (byte >= 248) continue;
    out += BASE62[byte % 62];
    if (out.length === length) return out;
  }
  return null;
}

let CRC_TABLE: Uint32Array | null = null;

/** CRC-32 (IEEE) of a text's UTF-8 bytes; the token's characters are ASCII, one byte each. */
export function crc32(text: string): number {
  if (!CRC_TABLE) {
    CRC_TABLE = new Uint32Array(256);
    for (let n = 0; n < 256; n++) {
      let c = n;
      for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
      CRC_TABLE[n] = c >>> 0;
    }
  }
  let crc = 0xffffffff;
  for (const byte of new TextEncoder().encode(text)) crc = CRC_TABLE[(crc ^ byte) & 0xff]! ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}

// ---- Who wrote it: one display rule ----

/** The member a history row names, resolved at read time (a removed member keeps their name, marked removed). */
export const memberRefSchema = z.looseObject({
  id: z.string(),
  name: z.string(),
  shared: z.boolean(),
  removed: z.boolean(),
});
export type MemberRef = z.infer<typeof memberRefSchema>;

/**
 * Who did it, in one line, for `history`, `conflicts`, the window and notifications: the member (from the
 * credential; the service decides it) first, then the device label the client sent (its own words, so marked as
 * such). `member` undefined: a service without members (a spec one, an older flowsync), the label alone as before;
 * null: a row written before the service had members.
 */
export function whoWrote(member: MemberRef | null | undefined, label: string | null): string {
  if (member === undefined) return label ?? '—';
  if (member === null) return label ? `${label} (before members)` : '— (before members)';
  // The shared token names nobody: the label is all there is, and only the client's word for it.
  if (member.shared) return label ? `${label} (shared token, unverified)` : 'shared token';
  const name = member.removed ? `${member.name} (removed)` : member.name;
  return label ? `${name} · ${label}` : name;
}

// ---- The member functions (extensions) ----

const memberNameArg = z.string().min(1).max(40);
const tokenIdArg = z.string().min(1).max(80);

/** Who the caller is: the credential's member, role and token. */
export const whoamiArgsSchema = z.strictObject({ baggage: baggageSchema });
export const whoamiValueSchema = z.looseObject({
  member: z.string(),
  /**
   * The member's id, as history rows name it (`versions[].member.id`): what an agent compares its own writes by.
   * Absent from a service older than it.
   */
  member_id: z.string().optional(),
  role: roleSchema,
  shared: z.boolean(),
  /** The token's public id (`fsm_…`), null for a shared token. */
  token: z.string().nullable(),
  label: z.string().nullable(),
  expires_at: isoTimeSchema.nullable(),
  /** When the token was made (or renewed): with expires_at, its life, which the agent's renewal is timed by. */
  issued_at: isoTimeSchema.nullable().optional(),
});
export type WhoamiValue = z.infer<typeof whoamiValueSchema>;

/** The caller's own token renewed: the same member and label, a new token shown once (the agent's keychain). */
export const renewTokenArgsSchema = z.strictObject({ baggage: baggageSchema });
export const renewTokenValueSchema = z.looseObject({
  member: z.string(),
  role: roleSchema,
  /** The new token, the one time it exists outside its holder's keychain. */
  token: z.string(),
  token_id: z.string(),
  label: z.string(),
  expires_at: isoTimeSchema,
  /** The token renewed (`fsm_…`): it works until the new one is first used, and until `replaced_expires_at` at most. */
  replaces: z.string(),
  replaced_expires_at: isoTimeSchema,
});
export type RenewTokenValue = z.infer<typeof renewTokenValueSchema>;

/** An invite, presented as the call's credential (`Bearer fsi_…`), exchanged for the member's own token. */
export const redeemInviteArgsSchema = z.strictObject({
  baggage: baggageSchema,
  /** What the token is for, shown in `member list` (a device: "laptop", "ci"). */
  label: z.string().min(1).max(60),
});
export const redeemInviteValueSchema = z.looseObject({
  member: z.string(),
  role: roleSchema,
  /** The token, the one time it exists outside the member's keychain. */
  token: z.string(),
  token_id: z.string(),
  expires_at: isoTimeSchema,
});
export type RedeemInviteValue = z.infer<typeof redeemInviteValueSchema>;

export const memberAddArgsSchema = z.strictObject({
  baggage: baggageSchema,
  name: memberNameArg,
  role: roleSchema,
  /** Days the redeemed token lasts (default 365 for read and write, 90 for an operator). */
  token_days: z.int().min(1).max(3650).optional(),
});
/** A new invite for a member (added, or an existing one's other device). */
export const memberInviteArgsSchema = z.strictObject({ baggage: baggageSchema, name: memberNameArg });
export const inviteValueSchema = z.looseObject({
  member: z.string(),
  role: roleSchema,
  /** The invite, shown once: it works once, until `expires_at`. */
  invite: z.string(),
  expires_at: isoTimeSchema,
});
export type InviteValue = z.infer<typeof inviteValueSchema>;

export const memberTokenSchema = z.looseObject({
  id: z.string(),
  label: z.string(),
  created_at: isoTimeSchema,
  expires_at: isoTimeSchema.nullable(),
  revoked_at: isoTimeSchema.nullable(),
});
export const memberRowSchema = z.looseObject({
  name: z.string(),
  role: roleSchema,
  shared: z.boolean(),
  created_at: isoTimeSchema,
  removed_at: isoTimeSchema.nullable(),
  tokens: z.array(memberTokenSchema),
  /** Invites not yet used, nor past their time. */
  invites_open: z.int().nonnegative(),
});
export type MemberRow = z.infer<typeof memberRowSchema>;
export const memberListArgsSchema = z.strictObject({ baggage: baggageSchema });
export const memberListValueSchema = z.looseObject({ members: z.array(memberRowSchema) });

export const memberRemoveArgsSchema = z.strictObject({ baggage: baggageSchema, name: memberNameArg });
export const memberRemoveValueSchema = z.looseObject({ member: z.string(), tokens_revoked: z.int() });

export const memberRoleArgsSchema = z.strictObject({
  baggage: baggageSchema,
  name: memberNameArg,
  role: roleSchema,
});
export const memberRoleValueSchema = z.looseObject({ member: z.string(), role: roleSchema, was: roleSchema });

export const tokenRevokeArgsSchema = z.strictObject({ baggage: baggageSchema, token_id: tokenIdArg });
export const tokenRevokeValueSchema = z.looseObject({ token_id: z.string(), member: z.string() });

// ---- The audit log ----

export const auditEventSchema = z.looseObject({
  id: z.int().positive(),
  at: isoTimeSchema,
  /** A member (named as now, with their role), or someone with the database itself (`local`: `user@host`). */
  actor: z.looseObject({
    member: z.string().nullable(),
    role: z.string().nullable(),
    local: z.string().nullable(),
  }),
  /** The public id of the member's token that made the call. */
  token: z.string().nullable(),
  action: z.string(),
  target: z.string().nullable(),
  detail: z.record(z.string(), z.unknown()),
  trace_id: z.string().nullable(),
});
export type AuditEvent = z.infer<typeof auditEventSchema>;

export const auditArgsSchema = z.strictObject({
  baggage: baggageSchema,
  since: isoTimeSchema.optional(),
  action: z.string().min(1).max(60).optional(),
  limit: z.int().min(1).max(1000).optional(),
  /** Recompute the hash chain from its first row. */
  verify: z.boolean().optional(),
});
export const auditValueSchema = z.looseObject({
  /** Newest first. */
  events: z.array(auditEventSchema),
  verified: z
    .looseObject({
      rows: z.int().nonnegative(),
      /** The first row that does not check out, and why; null when every row does. */
      broken: z.looseObject({ id: z.int().positive(), why: z.string() }).nullable(),
    })
    .optional(),
});
export type AuditValue = z.infer<typeof auditValueSchema>;

/** One event as `flowsync service audit` prints it. */
export function auditLine(event: AuditEvent): string {
  const who = event.actor.member
    ? `${event.actor.member}${event.actor.role ? ` (${event.actor.role})` : ''}`
    : event.actor.local === 'system'
      ? 'the service'
      : `${event.actor.local ?? '?'} (local)`;
  const detail = Object.keys(event.detail).length > 0 ? `  ${JSON.stringify(event.detail)}` : '';
  return `${event.at.replace('T', ' ').slice(0, 19)}  ${who.padEnd(22)}  ${event.action.padEnd(16)}  ${event.target ?? ''}${detail}`;
}

/**
 * Whether a version's writer is this checkout, by the service's word where it has one: the member from
 * the credential must be this agent's own (from `whoami`) and the label its own; a version with no member (a
 * service without members, a row from before them) is judged by the label alone, as before. The agent's own-write
 * checks (src/sync/reconcile.ts isOwnVersion, writerSeen) call it, with `member` carried from list_files and the
 * refused write's conflict, and `memberId` from `whoami` (its `member_id`).
 */
export function writtenByMe(
  version: { writtenBy: string | null; member?: MemberRef | null },
  me: { writer: string | undefined; memberId: string | null },
): boolean {
  if (me.writer === undefined || version.writtenBy !== me.writer) return false;
  if (!version.member || me.memberId === null) return true;
  return version.member.id === me.memberId;
}
