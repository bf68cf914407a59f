import type { Access } from '../protocol/index.ts';

/** What goes in the Authorization header: `Bearer` for a user token, `Admin` for an operator token. */
export interface Credentials {
  scheme: 'Bearer' | 'Admin';
  token: string;
}

/**
 * Gives the credentials for a call, told whether the function is for operators only (`admin`) or for anyone
 * signed in (`any`); null when it has none. Asked on every call, so a token changed in the keychain is used at once.
 */
export type AuthProvider = (access: Access) => Credentials | null | Promise<Credentials | null>;

/** A fixed user token, a fixed admin token, or a provider (e.g. one reading the OS keychain). */
export type ClientAuth = { userToken: string } | { adminToken: string } | AuthProvider;

export function toAuthProvider(auth: ClientAuth): AuthProvider {
  if (typeof auth === 'function') return auth;
  const credentials: Credentials =
    'adminToken' in auth
      ? { scheme: 'Admin', token: auth.adminToken }
      : { scheme: 'Bearer', token: auth.userToken };
  return () => credentials;
}

export function authorizationHeader({ scheme, token }: Credentials): string {
  return `${scheme} ${token}`;
}
