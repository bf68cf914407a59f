import type * as KeytarModule from 'keytar';
import {
  KEYCHAIN_SERVICE,
  accountFor,
  type SecretKind,
  type SecretSource,
  type SecretStore,
} from './secret-store.ts';

type Keytar = typeof KeytarModule;

/** No OS keychain answered; the message says how to go on without one. */
export class KeychainUnavailable extends Error {
  override readonly name = 'KeychainUnavailable';
  constructor(cause: unknown) {
    super(
      'No OS keychain is reachable (on Linux: a Secret Service such as gnome-keyring over D-Bus). ' +
        'Set FLOWSYNC_TOKEN, FLOWSYNC_ADMIN_TOKEN or FLOWSYNC_API_KEY in the environment instead; ' +
        'flowsync never writes secrets to a file.',
      { cause },
    );
  }
}

/**
 * The OS keychain through keytar: Keychain on macOS, Credential Vault on Windows, libsecret on Linux. keytar is
 * loaded on first use so that commands which need no secret work where its native part cannot load.
 */
export class KeychainSecretStore implements SecretStore {
  private keytar: Promise<Keytar> | null = null;

  async get(serviceUrl: string, kind: SecretKind): Promise<string | null> {
    return this.use((keytar) => keytar.getPassword(KEYCHAIN_SERVICE, accountFor(serviceUrl, kind)));
  }

  async locate(
    serviceUrl: string,
    kind: SecretKind,
  ): Promise<{ secret: string | null; source: SecretSource }> {
    try {
      const secret = await this.get(serviceUrl, kind);
      return { secret, source: secret === null ? 'none' : 'keychain' };
    } catch (error) {
      if (error instanceof KeychainUnavailable) return { secret: null, source: 'unavailable' };
      throw error;
    }
  }

  async set(serviceUrl: string, kind: SecretKind, secret: string): Promise<void> {
    await this.use((keytar) => keytar.setPassword(KEYCHAIN_SERVICE, accountFor(serviceUrl, kind), secret));
  }

  async delete(serviceUrl: string, kind: SecretKind): Promise<boolean> {
    return this.use((keytar) => keytar.deletePassword(KEYCHAIN_SERVICE, accountFor(serviceUrl, kind)));
  }

  private async use<T>(action: (keytar: Keytar) => Promise<T>): Promise<T> {
    this.keytar ??= import('keytar').then((module) => (module.default ?? module) as Keytar);
    try {
      return await action(await this.keytar);
    } catch (error) {
      // keytar's errors are about D-Bus or the daemon, never about the secret: safe to keep as the cause.
      throw new KeychainUnavailable(error);
    }
  }
}
