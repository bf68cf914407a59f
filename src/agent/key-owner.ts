import { createHash } from 'node:crypto';
import {
  MissingCredentialsError,
  RemoteError,
  failureKind,
  reasonOf,
  type RemoteClient,
} from '../client/index.ts';
import { KeychainUnavailable } from '../secrets/index.ts';
import { trackerUserName, type TrackerUser } from '../protocol/index.ts';
import { globalUserEmail, userEmail } from './git.ts';

/*
 * Whose personal API key this is. The tracker actions answer for the user a key is registered to (the tracker's
 * "viewer": "Open tasks assigned to you" are that user's), and a key is registered by an operator's add_activity
 * (key-created) naming a tracker user id. The agent registers the key to the tracker user whose email is git's
 * `user.email` (the one address a developer's machine already says is theirs), or to the one its user picks; it
 * does so only with an admin token (the embedded service's are the agent's own). A key is registered to a user of
 * the tracker only: registered to the OS user name (`root`), or to the stand-in of a git config with no email, it
 * belongs to no tracker user and every task list is empty; the repository's own `user.email` counts, not only the
 * global one.
 */

/**
 * The emails git says are the user's, the first one preferred: each repository's own `user.email` (its
 * .git/config, else the global one, as git signs its commits), then the global one. A repository's .git/config is
 * the user's own file (a clone never copies it) and reading it runs nothing. Each address once, in any case.
 */
export async function gitEmails(roots: readonly string[]): Promise<string[]> {
  return distinctEmails(await Promise.all([...roots.map((root) => userEmail(root)), globalUserEmail()]));
}

/** Each address once (the first spelling kept), in order, without the missing ones. */
export function distinctEmails(found: readonly (string | null)[]): string[] {
  const emails: string[] = [];
  for (const email of found) {
    const trimmed = email?.trim();
    if (trimmed && !emails.some((seen) => seen.toLowerCase() === trimmed.toLowerCase())) emails.push(trimmed);
  }
  return emails;
}

const personal = (secret: string) => ({ secret, type: 'personal-api-key' as const });

/** Who the service says holds a key: a tracker user, an id the tracker never named (an OS user name), or nobody. */
export type KeyHolder =
  { kind: 'user'; user: TrackerUser } | { kind: 'stranger'; id: string } | { kind: 'unregistered' };

export async function keyHolder(client: RemoteClient, secret: string): Promise<KeyHolder> {
  try {
    const viewer = await client.tracker.viewer({ api_key: personal(secret) });
    // The service answers an id the webhooks never delivered with no name and no email.
    return viewer.name === null && viewer.email === null
      ? { kind: 'stranger', id: viewer.id }
      : { kind: 'user', user: viewer };
  } catch (error) {
    if (error instanceof RemoteError && error.reason === 'unknown_api_key') return { kind: 'unregistered' };
    throw error;
  }
}

/**
 * The tracker users an operator sees (all, or those of `email`), or null when this agent cannot ask: no admin
 * token (not an operator of a remote service; none in the environment and no keychain to hold one is none), or a
 * service without users_list (one of the spec alone).
 */
export async function trackerUsers(client: RemoteClient, email?: string): Promise<TrackerUser[] | null> {
  try {
    return (await client.tracker.usersList(email === undefined ? {} : { email })).users;
  } catch (error) {
    if (error instanceof MissingCredentialsError || error instanceof KeychainUnavailable) return null;
    const reason = reasonOf(error);
    if (reason === 'forbidden' || reason === 'unknown_function') return null;
    throw error;
  }
}

/** add_activity (key-created): the key is `userId`'s from now on (the service moves a key registered to another). */
export async function registerKey(client: RemoteClient, secret: string, userId: string): Promise<void> {
  const hash = createHash('sha256').update(secret).digest('hex');
  await client.apiKey.addActivity({
    api_key_tid: `flowsync-${hash.slice(0, 12)}`,
    ts: Date.now(),
    payload: {
      type: 'key-created',
      hash,
      name: 'flowsync desktop',
      prefix_4: secret.slice(0, 4),
      suffix_4: secret.slice(-4),
      user_id: userId,
    },
  });
}

/**
 * What claimKey did: the key was a tracker user's already (left as it is: its user may have picked), or is now
 * the user's of git's email; or it could not be: nobody has that email (`email` null: git has none; `users`: whom
 * to pick from), or this agent is no operator of the service (`users` null).
 */
export type Claim =
  | { outcome: 'theirs'; user: TrackerUser }
  | { outcome: 'registered'; user: TrackerUser }
  | { outcome: 'unclaimed'; holder: KeyHolder; email: string | null; users: TrackerUser[] | null };

/**
 * Registers a key that belongs to no tracker user (not registered, or registered to a name the tracker does not
 * use) to the tracker user whose email is git's `user.email`. A key that is a tracker user's already is left alone.
 */
export async function claimKey(client: RemoteClient, secret: string, emails: string[]): Promise<Claim> {
  const holder = await keyHolder(client, secret);
  if (holder.kind === 'user') return { outcome: 'theirs', user: holder.user };
  for (const email of emails) {
    // Asked by email: users_list answers at most USERS_LIST_MAX users, and the user may be past them.
    const matching = await trackerUsers(client, email);
    if (matching === null) break; // this agent may not ask
    const you = matching.find((user) => sameEmail(user, email));
    if (you) {
      await registerKey(client, secret, you.id);
      return { outcome: 'registered', user: you };
    }
  }
  // Nobody of the tracker has the user's email: the key stays as it is until the user picks who they are from
  // everyone (null: this agent may not ask). Never registered to a stand-in the tracker does not know (`root`),
  // which made every task list empty and hid that nobody had been found.
  const users = await trackerUsers(client);
  return { outcome: 'unclaimed', holder, email: emails[0] ?? null, users };
}

/** A key that no tracker action would take and that this agent may not register (it is no operator): not worth keeping. */
export function unusable(claim: Claim): boolean {
  return claim.outcome === 'unclaimed' && claim.holder.kind === 'unregistered' && claim.users === null;
}

/** The line that says who the user is in the tracker after a claim, or what to do. */
export function claimLine(claim: Claim, serviceUrl: string): string {
  return claim.outcome === 'unclaimed'
    ? unclaimedLine(claim, serviceUrl)
    : `You are ${trackerUserName(claim.user)} in the tracker.`;
}

const sameEmail = (user: TrackerUser, email: string) =>
  user.email?.trim().toLowerCase() === email.trim().toLowerCase();

/**
 * What to do about a key that is nobody's, in one line: whom it is registered to (if anyone), why flowsync could
 * not register it to the user, and what to do. `inSettings`: the line is shown in Settings, above the list to pick
 * from, where "pick who you are in Settings" sent the user where they already were.
 */
export function unclaimedLine(
  { holder, email, users }: Omit<Extract<Claim, { outcome: 'unclaimed' }>, 'outcome'>,
  serviceUrl: string,
  inSettings = false,
): string {
  const now =
    holder.kind === 'stranger'
      ? `Your personal API key is registered to "${holder.id}", whom the tracker does not know`
      : `${serviceUrl} does not know your personal API key yet`;
  const pick = inSettings ? 'pick who you are below' : 'pick who you are in Settings';
  if (users === null) return `${now}: ${NOT_AN_OPERATOR}`;
  if (users.length === 0)
    return `${now}, and the tracker has told ${serviceUrl} about no user yet (its webhooks deliver them): ${inSettings ? 'pick who you are here' : pick} once it has.`;
  if (email === null)
    return `${now}: git has no user.email to find you by (\`git config user.email you@example.com\` in your repository, or with --global); ${pick}.`;
  const match = users.find((user) => sameEmail(user, email));
  if (match) return `${now}: ${pick} (${trackerUserName(match)} has your git email).`;
  return `${now}, and no tracker user has your git email (${email}): ${pick}.`;
}

/** How a key comes to be registered when this agent may not do it. */
export const NOT_AN_OPERATOR =
  "sign in with an admin token (Settings, or `flowsync login --admin`) and flowsync registers it to you, or ask the service's operator to register it to you.";

/** Who the key makes its user in the tracker, as Settings shows it (settingsSchema's `you`). */
export interface KeyOwnerView {
  /** The tracker user the key belongs to; null when it belongs to none (`problem` says why and what to do). */
  user: TrackerUser | null;
  /** git's `user.email` (a repository's, else the global one), whom the key is registered to by default. */
  gitEmail: string | null;
  /** Everyone the key may be registered to instead (only an operator may ask: empty otherwise). */
  choices: TrackerUser[];
  problem: string | null;
}

export async function keyOwnerView(
  client: RemoteClient,
  secret: string,
  serviceUrl: string,
  roots: readonly string[],
): Promise<KeyOwnerView> {
  const [emails, holder, users] = await Promise.all([
    gitEmails(roots),
    keyHolder(client, secret),
    trackerUsers(client),
  ]);
  // The address the tracker knows, if one of them is; else the one git prefers.
  const gitEmail = emails.find((email) => users?.some((user) => sameEmail(user, email))) ?? emails[0] ?? null;
  return {
    user: holder.kind === 'user' ? holder.user : null,
    gitEmail,
    choices: users ?? [],
    problem:
      holder.kind === 'user' ? null : unclaimedLine({ holder, email: gitEmail, users }, serviceUrl, true),
  };
}

/**
 * At the agent's start, once: the key in use (`from`: where it comes from, e.g. FLOWSYNC_API_KEY) registered to
 * its user when it is nobody's and this agent is an operator (always, with the embedded service), and the line
 * that says who the user is in the tracker, or what to do. Null when the service could not be asked (the
 * sync lines say why).
 */
export async function keyLineAtStart(
  client: RemoteClient,
  secret: string,
  serviceUrl: string,
  from: string,
  roots: readonly string[],
): Promise<string | null> {
  let claim: Claim;
  try {
    claim = await claimKey(client, secret, await gitEmails(roots));
  } catch (error) {
    // Not answering, or refusing the user token: the agent's own lines about the service say so.
    if (failureKind(error) !== null) return null;
    throw error;
  }
  if (claim.outcome === 'registered')
    return `You are ${trackerUserName(claim.user)} in the tracker: your personal API key (${from}) is registered to the tracker user with your git email.`;
  return claimLine(claim, serviceUrl);
}
