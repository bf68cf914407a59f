import {
  RemoteError,
  checkAccess,
  createClient,
  failureKind,
  reasonOf,
  type ClientAuth,
} from '../client/index.ts';
import type { RedeemInviteValue } from '../protocol/index.ts';
import { hostname } from 'node:os';
import type { SecretKind, SecretStore } from '../secrets/index.ts';
import { NOT_AN_OPERATOR, claimKey, claimLine, gitEmails, unclaimedLine, unusable } from './key-owner.ts';

export const SECRET_NAMES: Record<SecretKind, string> = {
  'access-token': 'user token',
  'admin-token': 'admin token',
  'api-key': 'personal API key',
};

/**
 * A token or key the service does not accept, in the user's words: the function the check happened to call and
 * its HTTP status are not theirs ("crypto/decrypt_aes_gcm/run refused (HTTP 401)" was the line a typo gave).
 */
export class SecretRefused extends Error {
  override readonly name = 'SecretRefused';
}

/**
 * Proves a token works with one call that changes nothing: a cache read for an admin token, decrypt for a user
 * token. A refusal becomes a SecretRefused whose message says what to do, in one line. (A personal API key is
 * proved by claimApiKey, which also registers it to its user.)
 */
export async function checkSecret(
  url: string,
  kind: 'access-token' | 'admin-token',
  secret: string,
): Promise<void> {
  const auth: ClientAuth = kind === 'admin-token' ? { adminToken: secret } : { userToken: secret };
  const client = createClient({ baseUrl: url, auth, retry: { attempts: 2 } });
  try {
    if (kind === 'admin-token') {
      await client.tracker.workflowStateCacheGetByTeam({ team_id: 'flowsync-login-check' });
    } else {
      await checkAccess(client);
    }
  } catch (error) {
    if (error instanceof RemoteError && failureKind(error) === 'unauthorized')
      throw new SecretRefused(refusal(kind, url, error));
    throw error;
  } finally {
    await client.close();
  }
}

/**
 * An operator's one-time invite exchanged for the member's own token, as `flowsync login --invite` and the
 * window's "Join with an invite" both do: the invite is the call's credential, valid for this one function. A refusal
 * (used, expired, voided, or a service without members) is a SecretRefused in the user's words.
 */
export async function redeemInvite(url: string, invite: string, label: string): Promise<RedeemInviteValue> {
  const client = createClient({ baseUrl: url, auth: { userToken: invite } });
  try {
    return await client.members.redeemInvite({ label });
  } catch (error) {
    if (error instanceof RemoteError && failureKind(error) === 'unauthorized')
      throw new SecretRefused(error.errorMessage);
    if (error instanceof RemoteError && error.statusCode === 404)
      throw new SecretRefused(
        `${url} has no members (a service of the spec, or an older flowsync): sign in with its user token instead (flowsync login, or Settings in the window).`,
      );
    throw error;
  } finally {
    await client.close();
  }
}

/**
 * `flowsync login --api-key`: the key registered to the user of git's email when it is nobody's and the stored
 * admin token allows (claimKey), refused when the service does not know it and cannot be told; the line that says
 * who the user is in the tracker, or what to do.
 */
export async function claimApiKey(url: string, secret: string, storedAuth: ClientAuth): Promise<string> {
  const client = createClient({ baseUrl: url, auth: storedAuth, retry: { attempts: 2 } });
  try {
    // The repository it is run in says who the user is first (its own user.email), as git would sign in it.
    const claim = await claimKey(client, secret, await gitEmails([process.cwd()]));
    if (claim.outcome === 'unclaimed' && unusable(claim)) throw new SecretRefused(unclaimedLine(claim, url));
    return claimLine(claim, url);
  } catch (error) {
    if (error instanceof RemoteError && failureKind(error) === 'unauthorized')
      throw new SecretRefused(refusal('api-key', url, error));
    throw error;
  } finally {
    await client.close();
  }
}

function refusal(kind: SecretKind, url: string, error: RemoteError): string {
  if (kind === 'api-key' && error.reason === 'unknown_api_key') {
    return `${url} does not know this personal API key yet: ${NOT_AN_OPERATOR}`;
  }
  if (kind === 'api-key') return `sign in first: checking an API key needs a user token.`;
  if (kind === 'admin-token' && reasonOf(error) === 'forbidden') {
    return `that is a user token, not an admin token.`;
  }
  return `${url} does not accept this ${SECRET_NAMES[kind]}: check it was copied whole (\`flowsync serve\` prints both tokens on first start).`;
}

/** What a member token is for, in `member list`: the name its user gave, else this machine's (60 characters at most). */
export function deviceLabel(given?: string): string {
  return (given ?? hostname()).slice(0, 60) || 'device';
}

/**
 * A redeemed invite's token kept in the keychain, under this service's name: an operator's is also the admin token
 * (`Admin` for their functions). `flowsync login --invite` and the window's "Join with an invite" keep it so.
 */
export async function keepMemberTokens(
  store: SecretStore,
  secretsUrl: string,
  { token, role }: Pick<RedeemInviteValue, 'token' | 'role'>,
): Promise<void> {
  await store.set(secretsUrl, 'access-token', token);
  if (role === 'operator') await store.set(secretsUrl, 'admin-token', token);
}
