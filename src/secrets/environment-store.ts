import type { SecretKind, SecretSource, SecretStore } from './secret-store.ts';

/** The environment variable that overrides each kind of secret, for CI and headless machines. */
export const SECRET_ENV_VARS: Record<SecretKind, string> = {
  'access-token': 'FLOWSYNC_TOKEN',
  'admin-token': 'FLOWSYNC_ADMIN_TOKEN',
  'api-key': 'FLOWSYNC_API_KEY',
};

/** Secrets from the environment, whatever the service URL. Read-only: it cannot store or delete. */
export function environmentSecret(kind: SecretKind, env: NodeJS.ProcessEnv = process.env): string | null {
  const value = env[SECRET_ENV_VARS[kind]]?.trim();
  return value ? value : null;
}

/**
 * The store flowsync uses: a secret set in the environment wins; otherwise the keychain. Writes go to the
 * keychain only; when it is unreachable they fail with KeychainUnavailable, never falling back to a file.
 */
export class LayeredSecretStore implements SecretStore {
  constructor(
    private readonly keychain: SecretStore,
    private readonly env: NodeJS.ProcessEnv = process.env,
  ) {}

  async get(serviceUrl: string, kind: SecretKind): Promise<string | null> {
    return environmentSecret(kind, this.env) ?? this.keychain.get(serviceUrl, kind);
  }

  /** Each secret on its own: one variable missing from the environment says nothing about the others. */
  async locate(
    serviceUrl: string,
    kind: SecretKind,
  ): Promise<{ secret: string | null; source: SecretSource }> {
    const fromEnv = environmentSecret(kind, this.env);
    if (fromEnv) return { secret: fromEnv, source: 'environment' };
    return this.keychain.locate(serviceUrl, kind);
  }

  set(serviceUrl: string, kind: SecretKind, secret: string): Promise<void> {
    return this.keychain.set(serviceUrl, kind, secret);
  }

  delete(serviceUrl: string, kind: SecretKind): Promise<boolean> {
    return this.keychain.delete(serviceUrl, kind);
  }
}
