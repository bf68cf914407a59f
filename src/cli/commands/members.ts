import { Command, Option } from 'commander';
import { createClient, MissingCredentialsError, type AuthProvider } from '../../client/index.ts';
import {
  ROLES,
  auditLine,
  printable,
  roleSchema,
  type InviteValue,
  type MemberRow,
  type ParsedArgsOf,
  type Role,
  type ValueOf,
} from '../../protocol/index.ts';
import { createSecretStore, type SecretStore } from '../../secrets/index.ts';
import type { LocalMembersPath } from '../../service/index.ts';
import { resolveService, urlOption } from '../service-url.ts';
import { EXIT } from '../exit-codes.ts';
import { UsageError } from '../usage-error.ts';

/**
 * `flowsync service member …` and `flowsync service token revoke`: over HTTP with the operator's token
 * from the keychain (`flowsync login --admin`, or an operator's `login --invite`), or with `--db` on the database
 * itself: the first operator of a service, or one who lost their token (audited as local access, not a member).
 */
interface Where {
  db?: string;
  url?: string;
}

const DB_HELP =
  "act on the service's database itself (a SQLite file or a postgres:// URL), without a running service or a token";

function dbOption(): Option {
  return new Option('--db <file or url>', DB_HELP);
}

function roleOf(given: string): Role {
  const parsed = roleSchema.safeParse(given);
  if (!parsed.success) throw new UsageError(`"${given}" is not a role: ${ROLES.join(', ')}.`);
  return parsed.data;
}

export function memberCommand(): Command {
  return new Command('member')
    .description(
      "The members of a team's service: each person has their own token, redeemed from a one-time invite an\n" +
        "operator makes; nobody, operators included, ever sees another member's token. Roles: read (changes\n" +
        "nothing), write (what a developer's agent does), operator (everything, members included).",
    )
    .addCommand(addCommand())
    .addCommand(inviteCommand())
    .addCommand(listCommand())
    .addCommand(removeCommand())
    .addCommand(roleCommand());
}

function addCommand(): Command {
  return new Command('add')
    .summary('add a member with a role and print their one-time invite')
    .description(
      'Adds a member and prints a one-time invite (24 hours). Send it to them; they run\n' +
        '`flowsync login --url <service> --invite` and paste it. Their token then lives in their keychain only.',
    )
    .argument('<name>', 'the member\'s name: a-z, 0-9, ".", "_", "-" (at most 40)')
    .requiredOption('--role <role>', `${ROLES.join(', ')}`)
    .option('--token-days <days>', 'how long their token lasts (default 365; 90 for an operator)')
    .addOption(dbOption())
    .addOption(urlOption())
    .addHelpText(
      'after',
      '\nExamples:\n' +
        '  $ flowsync service member add alice --role write\n' +
        '  $ flowsync service member add dana --role operator --db /var/lib/flowsync/service.db   # the first operator',
    )
    .action(async (name: string, options: Where & { role: string; tokenDays?: string }) => {
      const days = options.tokenDays === undefined ? undefined : Number(options.tokenDays);
      if (days !== undefined && !(Number.isInteger(days) && days >= 1 && days <= 3650))
        throw new UsageError('--token-days takes a whole number of days, from 1 to 3650.');
      const role = roleOf(options.role);
      const { value, url } = await run(options, 'svc/members/private/add', {
        name,
        role,
        ...(days !== undefined && { token_days: days }),
      });
      printInvite(value, url, `${value.member} is invited (${value.role}).`);
    });
}

function inviteCommand(): Command {
  return new Command('invite')
    .summary('another one-time invite for a member (another device of theirs)')
    .argument('<name>')
    .addOption(dbOption())
    .addOption(urlOption())
    .action(async (name: string, options: Where) => {
      const { value, url } = await run(options, 'svc/members/private/invite', { name });
      printInvite(value, url, `A new invite for ${value.member} (${value.role}).`);
    });
}

function printInvite(value: InviteValue, url: string | null, first: string): void {
  const service = url ?? '<the service address>';
  process.stdout.write(
    `${printable(first)} Send them this invite; it works once, until ${value.expires_at}:\n` +
      `  ${value.invite}\n` +
      `They run \`flowsync login --url ${printable(service)} --invite\` and paste it (it is read from a hidden prompt or stdin).\n`,
  );
}

function listCommand(): Command {
  return new Command('list')
    .summary('the members, their roles and tokens (ids only)')
    .option('--json', 'print the list as JSON')
    .addOption(dbOption())
    .addOption(urlOption())
    .action(async (options: Where & { json?: boolean }) => {
      const { value } = await run(options, 'svc/members/private/list', {});
      if (options.json) {
        process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
        return;
      }
      process.stdout.write(`${membersTable(value.members, Date.now())}\n`);
    });
}

/** `member list` as a table: a line a member, and a line under it for each token. Pure, for its test. */
export function membersTable(members: readonly MemberRow[], now: number): string {
  const width = Math.max(8, ...members.map((member) => member.name.length));
  const lines = [`${'NAME'.padEnd(width)}  ${'ROLE'.padEnd(8)}  STATUS    TOKENS`];
  for (const member of members) {
    const live = member.tokens.filter(
      (token) =>
        token.revoked_at === null && (token.expires_at === null || Date.parse(token.expires_at) > now),
    );
    const status = member.removed_at
      ? 'removed'
      : member.shared
        ? 'shared'
        : live.length === 0
          ? member.invites_open > 0
            ? 'invited'
            : 'no token'
          : 'active';
    const tokens = member.shared
      ? `the shared ${member.role === 'operator' ? 'admin (fsa_)' : 'user (fsu_)'} token`
      : live.length === 0
        ? member.invites_open > 0
          ? `${member.invites_open} open invite${member.invites_open === 1 ? '' : 's'}`
          : '—'
        : `${live.length} token${live.length === 1 ? '' : 's'}`;
    lines.push(`${member.name.padEnd(width)}  ${member.role.padEnd(8)}  ${status.padEnd(8)}  ${tokens}`);
    if (member.removed_at) continue;
    for (const token of live) {
      const expires = token.expires_at ? `expires ${token.expires_at.slice(0, 10)}` : 'no expiry';
      lines.push(`${' '.repeat(width)}    ${token.id} "${token.label}" ${expires}`);
    }
  }
  return lines.map((line) => printable(line)).join('\n');
}

function removeCommand(): Command {
  return new Command('remove')
    .summary('remove a member: their tokens are refused by every service process within 1 s')
    .description(
      'Removes a member: every token of theirs is revoked, and every service process refuses it within a\n' +
        'second. Their name stays on their history. `member remove shared` retires the shared user token.',
    )
    .argument('<name>')
    .addOption(dbOption())
    .addOption(urlOption())
    .action(async (name: string, options: Where) => {
      const { value } = await run(options, 'svc/members/private/remove', { name });
      const tokens = `${value.tokens_revoked} token${value.tokens_revoked === 1 ? '' : 's'} revoked`;
      process.stdout.write(
        `${printable(value.member)} removed: ${tokens}; every service process refuses them within 1 s.\n`,
      );
    });
}

function roleCommand(): Command {
  return new Command('role')
    .summary("change a member's role")
    .argument('<name>')
    .argument('<role>', ROLES.join(', '))
    .addOption(dbOption())
    .addOption(urlOption())
    .action(async (name: string, role: string, options: Where) => {
      const { value } = await run(options, 'svc/members/private/role', { name, role: roleOf(role) });
      process.stdout.write(`${printable(value.member)} is now ${value.role} (was ${value.was}).\n`);
    });
}

export function tokenCommand(): Command {
  return new Command('token')
    .description("A member's tokens: `revoke` one (a lost laptop); the member's others go on working.")
    .addCommand(
      new Command('revoke')
        .summary('revoke one member token by its id (fsm_… as `member list` shows it)')
        .argument('<id>', 'the token id, e.g. fsm_3kT9xQ2mB7')
        .addOption(dbOption())
        .addOption(urlOption())
        .action(async (id: string, options: Where) => {
          const { value } = await run(options, 'svc/members/private/revoke_token', { token_id: id });
          process.stdout.write(
            `${printable(`${value.token_id}…`)} of ${printable(value.member)} revoked: every service process refuses it within 1 s.\n`,
          );
        }),
    );
}

export function auditCommand(): Command {
  return new Command('audit')
    .description(
      'The audit log: operator actions and mass changes (purges, restores, deletions of 50 files or more in one\n' +
        'call, member and token changes), newest first, each by the member whose token made the call. Append-only\n' +
        'and hash-chained: --verify recomputes the chain and names the first row changed, removed or put in\n' +
        '(exit 1). It cannot stop someone who writes the database itself; it shows it.',
    )
    .option('--since <time>', 'only events at or after this ISO time, or this many days ago (7d)')
    .option('--action <action>', 'only events of this action (purge_history, member_removed, …)')
    .option('--limit <n>', 'at most this many events (default 100, at most 1000)')
    .option('--verify', 'check the hash chain from its first row')
    .option('--json', 'print the answer as JSON')
    .addOption(dbOption())
    .addOption(urlOption())
    .addHelpText(
      'after',
      '\nExamples:\n  $ flowsync service audit --since 7d\n  $ flowsync service audit --verify --db service.db',
    )
    .action(
      async (
        options: Where & {
          since?: string;
          action?: string;
          limit?: string;
          verify?: boolean;
          json?: boolean;
        },
      ) => {
        const limit = options.limit === undefined ? undefined : Number(options.limit);
        if (limit !== undefined && !(Number.isInteger(limit) && limit >= 1 && limit <= 1000))
          throw new UsageError('--limit takes a whole number from 1 to 1000.');
        const since = options.since === undefined ? undefined : sinceOf(options.since, Date.now());
        const { value } = await run(options, 'svc/members/private/audit', {
          ...(since !== undefined && { since }),
          ...(options.action !== undefined && { action: options.action }),
          ...(limit !== undefined && { limit }),
          ...(options.verify && { verify: true }),
        });
        if (options.json) process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
        else for (const event of value.events) process.stdout.write(`${printable(auditLine(event))}\n`);
        const verified = value.verified;
        if (!verified) return;
        if (verified.broken === null) {
          if (!options.json)
            process.stdout.write(
              `The audit log verifies: ${verified.rows} rows, each linked to the one before.\n`,
            );
          return;
        }
        process.stderr.write(
          `flowsync: the audit log does not verify at row ${verified.broken.id}: ${printable(verified.broken.why)}.\n`,
        );
        process.exitCode = EXIT.remote;
      },
    );
}

/** `--since`: an ISO time as given, or `7d` as that many days before now. */
export function sinceOf(given: string, now: number): string {
  const days = /^(\d{1,4})d$/.exec(given);
  if (days) return new Date(now - Number(days[1]) * 86_400_000).toISOString();
  const time = Date.parse(given);
  if (Number.isNaN(time))
    throw new UsageError(`--since takes an ISO time (2026-11-27T00:00:00Z) or days (7d): "${given}".`);
  return new Date(time).toISOString();
}

/**
 * A member function with `--db` on the database, else over HTTP with the operator's token; its value, and the
 * service's address when there is one (for the invite's line).
 */
async function run<P extends LocalMembersPath>(
  where: Where,
  path: P,
  args: Omit<ParsedArgsOf<P>, 'baggage'>,
): Promise<{ value: ValueOf<P>; url: string | null }> {
  if (where.db !== undefined) {
    if (where.url !== undefined) throw new UsageError('Give --db or --url, not both.');
    const { callMembersOnDatabase } = await import('../../service/index.ts');
    const baggage = { trace_id: `local-${Date.now()}`, traffic_type: 'local' };
    const value = await callMembersOnDatabase(where.db, path, { ...args, baggage } as ParsedArgsOf<P>);
    return { value, url: null };
  }
  const { url, secrets, socketPath } = await resolveService(where.url);
  const client = createClient({
    baseUrl: url,
    auth: operatorAuth(createSecretStore(), url, secrets),
    ...(socketPath && { socketPath }),
  });
  try {
    return { value: (await client.call(path, args as never)) as ValueOf<P>, url };
  } finally {
    await client.close();
  }
}

function operatorAuth(store: SecretStore, url: string, secrets: string): AuthProvider {
  return async () => {
    const token = await store.get(secrets, 'admin-token');
    if (!token)
      throw new MissingCredentialsError(
        `Members are managed with an operator's token for ${url}: run \`flowsync login --admin\` (or \`--invite\` with an operator's invite), or give --db the service's database.`,
      );
    return { scheme: 'Admin', token };
  };
}
