import { describe, expect, it } from 'vitest';
import {
  ALL_FUNCTIONS,
  FUNCTIONS,
  TOKEN_LENGTH,
  base62FromBytes,
  crc32,
  formatToken,
  levelAllows,
  memberNameOf,
  memberNameProblem,
  narrowerRole,
  parseToken,
  tokenPasteProblem,
  whoWrote,
  writtenByMe,
  type MemberRef,
  type ParsedToken,
  type Role,
  type Scope,
} from '../../src/protocol/index.ts';

/**
 * The pure parts of a team's members (issue 48), a row a case: the token format and what a paste of one is told,
 * which role may call which function, and the one rule that names who wrote a version.
 */
const ID = '3kT9xQ2mB7';
const SECRET = 'Vq8aZp1Kd93LmQwErTyUiOpAsDfGhJkLzXcVbNm0123';
const TOKEN = formatToken('member', ID, SECRET);
const INVITE = formatToken('invite', ID, SECRET);

describe('a token: prefix, public id, 256 random bits, checksum', () => {
  it('is 64 characters of one double-clickable word, the checksum CRC32 in base62', () => {
    expect(TOKEN).toHaveLength(TOKEN_LENGTH);
    expect(TOKEN).toMatch(/^fsm_3kT9xQ2mB7_[0-9A-Za-z]{49}$/);
    expect(INVITE.startsWith('fsi_3kT9xQ2mB7_')).toBe(true);
    expect(crc32('123456789')).toBe(0xcbf43926); // the standard check value of CRC-32
  });

  const rows: { description: string; text: string; parsed: ParsedToken }[] = [
    { description: 'a whole member token', text: TOKEN, parsed: { ok: true, kind: 'member', id: ID } },
    { description: 'a whole invite', text: INVITE, parsed: { ok: true, kind: 'invite', id: ID } },
    {
      description: 'cut short by one character when copied',
      text: TOKEN.slice(0, -1),
      parsed: { ok: false, problem: 'truncated' },
    },
    {
      description: 'with a character too many',
      text: `${TOKEN}x`,
      parsed: { ok: false, problem: 'truncated' },
    },
    {
      description: 'one character of the secret mistyped (the checksum no longer matches)',
      text: TOKEN.slice(0, 20) + (TOKEN[20] === 'a' ? 'b' : 'a') + TOKEN.slice(21),
      parsed: { ok: false, problem: 'mistyped' },
    },
    {
      description: 'the id changed: the checksum covers it too',
      text: TOKEN.replace(ID, '3kT9xQ2mB8'),
      parsed: { ok: false, problem: 'mistyped' },
    },
    {
      description: "today's shared user token (fsu_, base64url)",
      text: `fsu_${'A'.repeat(40)}-_x`,
      parsed: { ok: false, problem: 'legacy' },
    },
    {
      description: "today's shared admin token (fsa_)",
      text: `fsa_${'b'.repeat(43)}`,
      parsed: { ok: false, problem: 'legacy' },
    },
    { description: 'anything else', text: 'ghp_abcdef', parsed: { ok: false, problem: 'foreign' } },
    { description: 'the empty text', text: '', parsed: { ok: false, problem: 'foreign' } },
  ];
  it.each(rows)('$description', ({ text, parsed }) => {
    expect(parseToken(text)).toEqual(parsed);
  });

  const pastes: { description: string; text: string; expected: 'member' | 'invite'; said: RegExp | null }[] =
    [
      {
        description: 'a whole invite where one is asked: fine',
        text: INVITE,
        expected: 'invite',
        said: null,
      },
      {
        description: 'an invite cut short: refused at once, with its length',
        text: INVITE.slice(0, 40),
        expected: 'invite',
        said: /not a whole flowsync invite: it has 40 characters of 64/,
      },
      {
        description: 'a mistyped invite: copy it again',
        text: INVITE.slice(0, -1) + (INVITE.endsWith('a') ? 'b' : 'a'),
        expected: 'invite',
        said: /does not check out/,
      },
      {
        description: 'a member token where an invite is asked',
        text: TOKEN,
        expected: 'invite',
        said: /member token, not an invite/,
      },
      {
        description: 'an invite where a token is asked',
        text: INVITE,
        expected: 'member',
        said: /invite, not a token/,
      },
      {
        description: 'a shared token where a token is asked: the service decides',
        text: `fsu_${'A'.repeat(43)}`,
        expected: 'member',
        said: null,
      },
    ];
  it.each(pastes)('a paste: $description', ({ text, expected, said }) => {
    const problem = tokenPasteProblem(text, expected);
    if (said === null) expect(problem).toBeNull();
    else expect(problem).toMatch(said);
  });

  it('draws base62 evenly: bytes of 248 and above are dropped, too few bytes give null', () => {
    expect(base62FromBytes(Uint8Array.from([0, 61, 62, 247, 248, 255, 1]), 5)).toBe('0z0z1');
    expect(base62FromBytes(Uint8Array.from([250, 251]), 1)).toBeNull();
  });
});

describe('roles: which level may call which scope', () => {
  const rows: { description: string; level: Role; scope: Scope; allowed: boolean }[] = [
    { description: 'a read-only member reads', level: 'read', scope: 'read', allowed: true },
    { description: 'a read-only member cannot write', level: 'read', scope: 'write', allowed: false },
    { description: 'a read-only member cannot operate', level: 'read', scope: 'operator', allowed: false },
    { description: 'a writer reads', level: 'write', scope: 'read', allowed: true },
    { description: 'a writer writes', level: 'write', scope: 'write', allowed: true },
    { description: 'a writer cannot operate', level: 'write', scope: 'operator', allowed: false },
    { description: 'an operator may do everything', level: 'operator', scope: 'operator', allowed: true },
    { description: 'an operator writes', level: 'operator', scope: 'write', allowed: true },
    {
      description: 'a read-only member renews her own token (a row changes: not the read scope)',
      level: 'read',
      scope: 'own',
      allowed: true,
    },
    {
      description: 'no token opens redeem_invite: only an invite',
      level: 'operator',
      scope: 'invite',
      allowed: false,
    },
  ];
  it.each(rows)('$description', ({ level, scope, allowed }) => {
    expect(levelAllows(level, scope)).toBe(allowed);
  });

  it.each([
    ['read', 'write', 'read'],
    ['operator', 'write', 'write'],
    ['write', 'operator', 'write'],
  ] as const)('a %s member on a scheme of at most %s acts as %s', (role, cap, level) => {
    expect(narrowerRole(role, cap)).toBe(level);
  });
});

describe('the scope table: every function has one', () => {
  it('read ⊂ write ⊂ operator; private functions are exactly the operator ones; the invite opens one', () => {
    for (const fn of ALL_FUNCTIONS) {
      expect(['read', 'write', 'operator', 'own', 'invite'], fn.path).toContain(fn.scope);
      expect(fn.kind === 'private', fn.path).toBe(fn.scope === 'operator');
      expect(fn.access, fn.path).toBe(fn.scope === 'operator' ? 'admin' : 'any');
    }
    expect(ALL_FUNCTIONS.filter((fn) => fn.scope === 'invite').map((fn) => fn.path)).toEqual([
      'svc/members/action/redeem_invite/run',
    ]);
    expect(ALL_FUNCTIONS.filter((fn) => fn.scope === 'own').map((fn) => fn.path)).toEqual([
      'svc/members/public/renew_token',
    ]);
  });

  it("keeps the spec's 20 as they were: the user token's functions are read or write, the admin's operator", () => {
    const byScope = (scope: Scope) => FUNCTIONS.filter((fn) => fn.scope === scope).map((fn) => fn.number);
    expect(byScope('read')).toEqual([2, 3, 12, 13, 15, 17]);
    expect(byScope('write')).toEqual([4, 7, 8, 10, 14, 19]);
    expect(byScope('operator')).toEqual([1, 5, 6, 9, 11, 16, 18, 20]);
  });
});

describe("the embedded service's member: named after the OS user", () => {
  it.each([
    ['a plain user name', 'alice', 'alice'],
    ['upper case lowered', 'Alice', 'alice'],
    ['a Windows name with a space and a domain', 'CORP\\John Doe', 'corp-john-doe'],
    ['leading characters a name cannot start with dropped', '_svc', 'svc'],
    ['cut at 40', 'a'.repeat(50), 'a'.repeat(40)],
    ['nothing left: owner', '___', 'owner'],
    ['a name the service keeps: owner', 'shared', 'owner'],
    ['root stays root', 'root', 'root'],
  ])('%s', (_description, user, name) => {
    expect(memberNameOf(user)).toBe(name);
  });
});

describe('names', () => {
  it.each([
    ['alice', null],
    ['ci.bot-2', null],
    ['Alice', /not a member name/],
    ['-x', /not a member name/],
    ['a'.repeat(41), /not a member name/],
    ['bob\u001b[31m', /not a member name/],
    ['shared', /keeps for itself/],
    ['local', /keeps for itself/],
  ])('%j → %s', (name, said) => {
    const problem = memberNameProblem(name);
    if (said === null) expect(problem).toBeNull();
    else expect(problem).toMatch(said);
  });
});

describe('who wrote it: one display rule', () => {
  const alice: MemberRef = { id: 'm_1', name: 'alice', shared: false, removed: false };
  const rows: {
    description: string;
    member: MemberRef | null | undefined;
    label: string | null;
    line: string;
  }[] = [
    {
      description: 'a member, with the device the client named (its words, second)',
      member: alice,
      label: 'laptop:~/code/app',
      line: 'alice · laptop:~/code/app',
    },
    { description: 'a member whose client named no device', member: alice, label: null, line: 'alice' },
    {
      description: 'a removed member keeps their name on their history',
      member: { ...alice, removed: true },
      label: null,
      line: 'alice (removed)',
    },
    {
      description: 'the shared token: the label is only what the client said',
      member: { id: 'shared', name: 'shared', shared: true, removed: false },
      label: 'bob@desk:~/app',
      line: 'bob@desk:~/app (shared token, unverified)',
    },
    {
      description: 'a row from before the service had members',
      member: null,
      label: 'ada@laptop:~/code/app',
      line: 'ada@laptop:~/code/app (before members)',
    },
    {
      description: 'the shared token, and no label',
      member: { id: 'shared', name: 'shared', shared: true, removed: false },
      label: null,
      line: 'shared token',
    },
    {
      description: 'a row from before members with no label',
      member: null,
      label: null,
      line: '— (before members)',
    },
    {
      description: 'a service without members (spec, or older flowsync): the label as before',
      member: undefined,
      label: 'ada@laptop',
      line: 'ada@laptop',
    },
  ];
  it.each(rows)('$description', ({ member, label, line }) => {
    expect(whoWrote(member, label)).toBe(line);
  });
});

describe("the agent's own write: the label, and the member where the service names one", () => {
  const me = { writer: 'alice@laptop:~/app (checkout 3f9a)', memberId: 'm_alice' };
  const alice: MemberRef = { id: 'm_alice', name: 'alice', shared: false, removed: false };
  const bob: MemberRef = { id: 'm_bob', name: 'bob', shared: false, removed: false };
  const rows: {
    description: string;
    version: { writtenBy: string | null; member?: MemberRef | null };
    me: { writer: string | undefined; memberId: string | null };
    mine: boolean;
  }[] = [
    {
      description: 'my label, my member: mine',
      version: { writtenBy: me.writer, member: alice },
      me,
      mine: true,
    },
    {
      description:
        "my exact label sent with bob's token: bob's (a forged label is a conflict by its real writer)",
      version: { writtenBy: me.writer, member: bob },
      me,
      mine: false,
    },
    {
      description: 'my member from another checkout of mine (another label): not this checkout',
      version: { writtenBy: 'alice@desk:~/app (checkout 91c0)', member: alice },
      me,
      mine: false,
    },
    {
      description: 'a service without members: the label alone, as before',
      version: { writtenBy: me.writer },
      me,
      mine: true,
    },
    {
      description: 'a row from before members: the label alone',
      version: { writtenBy: me.writer, member: null },
      me,
      mine: true,
    },
    {
      description: 'an agent that does not know its member yet (no whoami): the label alone',
      version: { writtenBy: me.writer, member: bob },
      me: { ...me, memberId: null },
      mine: true,
    },
    {
      description: 'an agent with no label never claims a version',
      version: { writtenBy: null, member: alice },
      me: { writer: undefined, memberId: 'm_alice' },
      mine: false,
    },
  ];
  it.each(rows)('$description', ({ version, me: who, mine }) => {
    expect(writtenByMe(version, who)).toBe(mine);
  });
});
