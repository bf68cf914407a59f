import { deviceLabel, keepMemberTokens, redeemInvite as exchangeInvite } from '../../agent/index.ts';
import { printable, tokenLabel, tokenPasteProblem } from '../../protocol/index.ts';
import { accountFor, createSecretStore, SECRET_ENV_VARS } from '../../secrets/index.ts';
import { readSecret } from '../read-secret.ts';
import { UsageError } from '../usage-error.ts';

/**
 * `flowsync login --invite`: the invite an operator sent, read from a hidden prompt or stdin (never an
 * argument: shell history and `ps` would keep it), checked for a whole paste before any call, redeemed for the
 * member's own token, which goes to the keychain only (both kinds for an operator: `Admin` for their functions).
 * With --print-token (CI) the token is printed once and nothing is kept.
 */
export async function redeemInvite(
  url: string,
  secrets: string,
  options: { printToken?: boolean; label?: string },
): Promise<void> {
  const store = createSecretStore();
  // An invite works once: a keychain that cannot take the token must be found before it is spent.
  if (!options.printToken && (await store.locate(secrets, 'access-token')).source === 'unavailable')
    throw new UsageError(
      'No OS keychain answers here, and an invite works once: redeem it with --print-token and keep the token in a secret store (FLOWSYNC_TOKEN).',
    );
  const invite = await readSecret(`invite for ${url}`);
  const problem = tokenPasteProblem(invite, 'invite');
  if (problem) throw new UsageError(problem);

  const label = deviceLabel(options.label);
  const value = await exchangeInvite(url, invite, label);
  const you = `You are ${value.member} (${value.role}) on ${url}.`;
  const name = tokenLabel('member', value.token_id.replace(/^fsm_/, ''));
  if (options.printToken) {
    // The token alone on stdout, for a pipe into a secret store; the rest on stderr.
    process.stdout.write(`${value.token}\n`);
    process.stderr.write(
      `${printable(`${you} Token ${name} ("${label}") is printed once above and kept nowhere; it expires ${value.expires_at.slice(0, 10)}.`)}\n`,
    );
    return;
  }
  await keepMemberTokens(store, secrets, value);
  process.stdout.write(
    `${printable(`${you} Token ${name} ("${label}") is in the OS keychain (flowsync / ${accountFor(secrets, 'access-token')}); it expires ${value.expires_at.slice(0, 10)}.`)}\n`,
  );
  const envVar = SECRET_ENV_VARS['access-token'];
  if (process.env[envVar])
    process.stderr.write(`Note: ${envVar} is set in this shell and is used instead of the keychain.\n`);
}
