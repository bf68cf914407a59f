import type { AuthProvider } from '../client/index.ts';
import type { SecretStore } from './secret-store.ts';

/**
 * Credentials for the client, read from the store on every call: the admin token for operator functions; for the
 * others the user's access token, or the admin token when only that one is stored (an operator may call anything).
 */
export function secretStoreAuth(store: SecretStore, serviceUrl: string): AuthProvider {
  return async (access) => {
    if (access === 'any') {
      // The user token first: with FLOWSYNC_TOKEN set, a headless machine never needs to reach a keychain.
      const user = await store.get(serviceUrl, 'access-token');
      if (user) return { scheme: 'Bearer', token: user };
    }
    const admin = await store.get(serviceUrl, 'admin-token');
    return admin ? { scheme: 'Admin', token: admin } : null;
  };
}
