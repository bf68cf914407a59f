/** What flowsync keeps per service: the user's access token, the operator's admin token, the tracker API key. */
export type SecretKind = 'access-token' | 'admin-token' | 'api-key';
export const SECRET_KINDS: readonly SecretKind[] = ['access-token', 'admin-token', 'api-key'];

/** Where a secret in use came from; `unavailable`: not in the environment, and no keychain answered. */
export type SecretSource = 'environment' | 'keychain' | 'none' | 'unavailable';

/** Where secrets live. Implementations never write a secret to a file. */
export interface SecretStore {
  get(serviceUrl: string, kind: SecretKind): Promise<string | null>;
  /** The secret and where it came from; never throws for a missing keychain (that is `unavailable`). */
  locate(serviceUrl: string, kind: SecretKind): Promise<{ secret: string | null; source: SecretSource }>;
  set(serviceUrl: string, kind: SecretKind, secret: string): Promise<void>;
  /** Returns true when there was a secret to delete. */
  delete(serviceUrl: string, kind: SecretKind): Promise<boolean>;
}

/** The keychain service name every flowsync secret is filed under. */
export const KEYCHAIN_SERVICE = 'flowsync';

/**
 * Where the embedded service's tokens are filed: a name that is no URL, so that no `--url`, `$FLOWSYNC_URL` or
 * config file can read them back for an address (filed under `http://127.0.0.1:7420`, `flowsync call` would
 * send them to whoever listens there). Only the agent and a CLI that found the running agent
 * through its lock use this name, with the address the lock gives.
 */
export const EMBEDDED_SECRETS = 'embedded';

/**
 * The name an embedded service's tokens are filed under: `embedded:<its database>`. One name for every database
 * (as before) let two agents with two data folders under one keychain take each other's tokens for their own: each
 * start found tokens its service refused, issued new ones and overwrote the other's, signing it out (the test
 * suite's files, side by side on one keyring, did it one run in six).
 */
export function embeddedSecrets(serviceDbPath: string): string {
  return `${EMBEDDED_SECRETS}:${serviceDbPath}`;
}

function isEmbeddedSecrets(name: string): boolean {
  return name === EMBEDDED_SECRETS || name.startsWith(`${EMBEDDED_SECRETS}:`);
}

/**
 * The keychain account of a secret: `<service url>#<kind>`, or `embedded:<database>#<kind>` for the embedded
 * service (`embedded#<kind>` as filed before). The URL
 * is normalized (lower-case scheme and host, no trailing slash) so that `http://127.0.0.1:7420/` and
 * `http://127.0.0.1:7420` name the same account.
 */
export function accountFor(serviceUrl: string, kind: SecretKind): string {
  const name = isEmbeddedSecrets(serviceUrl) ? serviceUrl : normalizeServiceUrl(serviceUrl);
  return `${name}#${kind}`;
}

/** A service address that is not an http(s) URL; the message says what one looks like. */
export class InvalidServiceUrl extends Error {
  override readonly name = 'InvalidServiceUrl';
  constructor(readonly given: string) {
    super(
      `"${given}" is not a service URL: give one like http://127.0.0.1:7420 or https://flows.example.com.`,
    );
  }
}

/**
 * The one rule for a service address: http or https, compared without a trailing slash and with the scheme and
 * host lower-cased. Anything else is an InvalidServiceUrl, for the CLI, the config and the window alike.
 */
export function normalizeServiceUrl(serviceUrl: string): string {
  let url: URL;
  try {
    url = new URL(serviceUrl.trim());
  } catch {
    throw new InvalidServiceUrl(serviceUrl);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new InvalidServiceUrl(serviceUrl);
  return `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
}

/** A secret as it may be shown to a person: its first and last four characters. */
export function maskSecret(secret: string): string {
  return secret.length >= 12 ? `${secret.slice(0, 4)}…${secret.slice(-4)}` : '…';
}
