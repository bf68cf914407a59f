// Owns the user's secrets: the OS keychain (keytar) behind SecretStore, and FLOWSYNC_* variables where there is none.
// May import: protocol, host, client.
import { LayeredSecretStore } from './environment-store.ts';
import { KeychainSecretStore } from './keychain-store.ts';
import type { SecretStore } from './secret-store.ts';

export {
  EMBEDDED_SECRETS,
  KEYCHAIN_SERVICE,
  SECRET_KINDS,
  InvalidServiceUrl,
  accountFor,
  embeddedSecrets,
  maskSecret,
  normalizeServiceUrl,
  type SecretKind,
  type SecretSource,
  type SecretStore,
} from './secret-store.ts';
export { KeychainSecretStore, KeychainUnavailable, type KeychainHealth } from './keychain-store.ts';
export { LayeredSecretStore, SECRET_ENV_VARS, environmentSecret } from './environment-store.ts';
export { secretStoreAuth } from './keychain-auth.ts';

/** The environment first, then the OS keychain. */
export function createSecretStore(env: NodeJS.ProcessEnv = process.env): SecretStore {
  return new LayeredSecretStore(new KeychainSecretStore(), env);
}
