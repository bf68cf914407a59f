import { KeychainSecretStore, SECRET_ENV_VARS, environmentSecret } from '../../secrets/index.ts';
import type { DoctorCheck } from '../../protocol/index.ts';
import { failure, passed, warning } from './verdicts.ts';

const START_ONE =
  'on Linux, run a Secret Service in your session (gnome-keyring or KeePassXC, started by your desktop; without ' +
  'one: dbus-run-session, then gnome-keyring-daemon --unlock)';

/**
 * The OS keychain keeps a secret now (written, read back, removed). Without one a sign-in is not kept and the agent
 * has no token for the service: a failure, unless a token comes from the environment or the service is the
 * embedded one (the agent then keeps its tokens in memory for its run): a warning.
 */
export async function keychainCheck(embedded: boolean): Promise<DoctorCheck> {
  const health = await new KeychainSecretStore().health();
  if (health.state === 'usable') return passed('keychain', 'keychain: the OS keychain keeps secrets');
  const fromEnvironment = environmentSecret('access-token') !== null;
  const message =
    health.state === 'absent'
      ? `keychain: no OS keychain answers (${health.detail}), so no sign-in is kept`
      : `keychain: the OS keychain is locked, or has no login keyring yet (${health.detail}): it keeps nothing, so a sign-in is lost`;
  const fix =
    health.state === 'absent'
      ? `${START_ONE}${fromEnvironment ? '' : `; or set ${SECRET_ENV_VARS['access-token']} in the environment`}`
      : 'unlock it (log in to your desktop session, or gnome-keyring-daemon --unlock and your password), then `flowsync login`';
  if (fromEnvironment)
    return warning(
      'keychain',
      `${message}; ${SECRET_ENV_VARS['access-token']} from the environment is used`,
      fix,
    );
  if (embedded)
    return warning(
      'keychain',
      `${message}; the embedded service's tokens last for one run of the agent`,
      fix,
    );
  return failure('keychain', message, fix);
}
