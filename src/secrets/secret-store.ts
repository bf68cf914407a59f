/** What flowsync keeps per service: the user's access token, the operator's admin token, the tracker API key. */
export type SecretKind = 'access-token' | 'admin-token' | 'api-key';
export const SECRET_KINDS: readonly SecretKind[] = ['access-token', 'admin-token', 'api-key'];

/** Where secrets live. Implementations never write a secret to a file. */
export interface SecretStore {
  get(serviceUrl: string, kind: SecretKind): Promise<string | null>;
  set(serviceUrl: string, kind: SecretKind, secret: string): Promise<void>;
  /** Returns true when there was a secret to delete. */
  delete(serviceUrl: string, kind: SecretKind): Promise<boolean>;
}

/** The keychain service name every flowsync secret is filed under. */
export const KEYCHAIN_SERVICE = 'flowsync';

/**
 * The keychain account of a secret: `<service url>#<kind>`. The URL is normalized (lower-case scheme and host,
 * no trailing slash) so that `http://127.0.0.1:7420/` and `http://127.0.0.1:7420` name the same account.
 */
export function accountFor(serviceUrl: string, kind: SecretKind): string {
  return `${normalizeServiceUrl(serviceUrl)}#${kind}`;
}

export function normalizeServiceUrl(serviceUrl: string): string {
  const url = new URL(serviceUrl);
  return `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
}

/** A secret as it may be shown to a person: its first and last four characters. */
export function maskSecret(secret: string): string {
  return secret.length >= 12 ? `${secret.slice(0, 4)}…${secret.slice(-4)}` : '…';
}
