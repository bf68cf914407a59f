import { randomBytes } from 'node:crypto';
import type * as KeytarModule from 'keytar';
import {
  KEYCHAIN_SERVICE,
  accountFor,
  type SecretKind,
  type SecretSource,
  type SecretStore,
} from './secret-store.ts';

type Keytar = typeof KeytarModule;

/**
 * Whether the OS keychain keeps secrets: `absent`, no Secret Service answers; `locked`, one answers but keeps
 * nothing. `detail` is keytar's words (D-Bus's, the daemon's), never a secret.
 */
export type KeychainHealth = { state: 'usable' } | { state: 'locked' | 'absent'; detail: string };

function causeOf(error: unknown): string {
  const cause = error instanceof KeychainUnavailable ? error.cause : error;
  return cause instanceof Error ? cause.message : String(cause);
}

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

  /**
   * Whether the keychain keeps a secret now: a probe written, read back and removed. Reading alone says nothing:
   * with gnome-keyring locked (or its login keyring never created) a read answers "no secret" as if none were kept,
   * and only a write fails (measured: "Cannot create an item in a locked collection"); that is how a sign-in is
   * lost without a word. Used by `flowsync doctor`.
   */
  async health(): Promise<KeychainHealth> {
    const account = 'doctor-probe';
    const probe = randomBytes(8).toString('hex');
    try {
      await this.use((keytar) => keytar.getPassword(KEYCHAIN_SERVICE, account));
    } catch (error) {
      return { state: 'absent', detail: causeOf(error) };
    }
    try {
      await this.use((keytar) => keytar.setPassword(KEYCHAIN_SERVICE, account, probe));
      const read = await this.use((keytar) => keytar.getPassword(KEYCHAIN_SERVICE, account));
      if (read !== probe) return { state: 'locked', detail: 'a secret written could not be read back' };
      return { state: 'usable' };
    } catch (error) {
      return { state: 'locked', detail: causeOf(error) };
    } finally {
      await this.use((keytar) => keytar.deletePassword(KEYCHAIN_SERVICE, account)).catch(() => false);
    }
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
