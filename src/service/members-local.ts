import { ChangeFeed } from './functions/change-feed.ts';
import { hostname, userInfo } from 'node:os';
import type { ParsedArgsOf, ValueOf } from '../protocol/index.ts';
import { openServiceDatabase } from './db/open.ts';
import { auditFunctions } from './functions/audit.ts';
import { memberFunctions, type MembersPath } from './functions/members/index.ts';
import { DEFAULT_RETENTION } from './store/file-history.ts';
import type { Implementation } from './functions/types.ts';

/** The member functions an operator may run on the database itself, without a service or a token. */
export type LocalMembersPath =
  | Exclude<MembersPath, 'svc/members/public/whoami' | 'svc/members/action/redeem_invite/run'>
  | 'svc/members/private/audit';

/** Who acts with the database itself: the OS user and host, shown as local access, never as a member. */
export function localActor(): string {
  let user = 'someone';
  try {
    user = userInfo().username;
  } catch {
    // No user name (a container with a numeric uid): "someone" at this host.
  }
  return `${user}@${hostname()}`;
}

/**
 * `flowsync service member … --db <file|url>`: the member function run on the database directly, for the first
 * operator of a service or one who lost their token. Whoever can open the database can change any row anyway; this
 * does it the service's way (digests only, the epoch bumped so every running `serve` takes the change within its
 * poll, a second at most). The database must be at this flowsync's schema: `serve` brings it there.
 */
export async function callMembersOnDatabase<P extends LocalMembersPath>(
  location: string,
  path: P,
  args: ParsedArgsOf<P>,
): Promise<ValueOf<P>> {
  const db = await openServiceDatabase(location, { update: 'none' });
  try {
    const stores = {
      db,
      retention: DEFAULT_RETENTION,
      membersChanged: async () => {},
      // No call of a live team's waits here: the members' functions never ask the feed.
      feed: new ChangeFeed(db),
    };
    const implementations = { ...memberFunctions(stores), ...auditFunctions(stores) };
    const implementation = implementations[path] as unknown as Implementation<P>;
    const actor = `local:${localActor()}`;
    return await implementation(args, {
      traceId: `local-${Date.now()}`,
      caller: 'admin',
      apiKey: null,
      writer: null,
      invite: null,
      member: {
        memberId: actor,
        name: actor,
        role: 'operator',
        level: 'operator',
        shared: false,
        tokenId: null,
        label: null,
        issuedAt: null,
        expiresAt: null,
        replaces: null,
      },
    });
  } finally {
    await db.close();
  }
}
