import type { RemoteClient } from '../../client/index.ts';
import { tokenLabel, type DoctorCheck, type WhoamiValue } from '../../protocol/index.ts';
import { SECRET_ENV_VARS, type SecretSource } from '../../secrets/index.ts';
import { passed, warning } from './verdicts.ts';

/** doctor warns this long before a member token expires (a notification follows at 7 days). */
export const EXPIRY_WARNING_DAYS = 14;

const DAY_MS = 86_400_000;

/** Who the token says you are, and whether it nears its end; null when the service has no members (or no answer). */
export async function tokenCheck(
  client: RemoteClient,
  source: SecretSource,
  timeoutMs: number,
): Promise<DoctorCheck | null> {
  try {
    const who = await client.members.whoami({}, { timeoutMs });
    return tokenVerdict(who, { fromEnvironment: source === 'environment', now: Date.now() });
  } catch {
    // A service of the spec (404), an older flowsync: the service line said all there is.
    return null;
  }
}

/**
 * The token line of doctor: who you are, and a warning EXPIRY_WARNING_DAYS before the token expires, with what
 * renews it — the agent (while it runs, for a token in the keychain), `renew_token` for a token from the
 * environment (the agent does not replace that one), a new invite for an operator (whose token is not renewed by
 * itself). Pure: `now` is given.
 */
export function tokenVerdict(
  who: WhoamiValue,
  { fromEnvironment, now }: { fromEnvironment: boolean; now: number },
): DoctorCheck {
  if (who.shared)
    return passed(
      'token',
      `token: the shared ${who.role === 'operator' ? 'admin' : 'user'} token (${who.role}): your writes show as "shared token"; it does not expire`,
    );
  const named = who.token ? `${tokenLabel('member', who.token.replace(/^fsm_/, ''))} ` : '';
  const you = `token: you are ${who.member} (${who.role}); token ${named}"${who.label ?? ''}"`;
  if (who.expires_at === null) return passed('token', you);
  const left = Date.parse(who.expires_at) - now;
  const on = who.expires_at.slice(0, 10);
  if (left > EXPIRY_WARNING_DAYS * DAY_MS) return passed('token', `${you} expires ${on}`);
  const days = Math.floor(left / DAY_MS);
  const when = days >= 1 ? `in ${days} day${days === 1 ? '' : 's'}` : 'in less than a day';
  const fix =
    who.role === 'operator'
      ? `an operator's token is not renewed by itself: ask another operator for an invite (\`flowsync service member invite ${who.member}\`), then \`flowsync login --invite\``
      : fromEnvironment
        ? `the agent does not replace a token from ${SECRET_ENV_VARS['access-token']}: \`flowsync call svc/members/public/renew_token\` prints a new one, once; put it there`
        : 'keep the agent running (`flowsync start`): it renews the token in the keychain before it expires';
  return warning('token', `${you} expires ${on}, ${when}`, fix);
}
