import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  KeychainSecretStore,
  LayeredSecretStore,
  accountFor,
  maskSecret,
  secretStoreAuth,
} from '../../src/secrets/index.ts';

// npm test runs inside scripts/with-keychain.sh: a private D-Bus session with an unlocked gnome-keyring.
const keychain = new KeychainSecretStore();
const freshUrl = () => `http://127.0.0.1:${10_000 + Math.floor(Math.random() * 50_000)}/${randomUUID()}`;

describe('the OS keychain (gnome-keyring over D-Bus)', () => {
  it('sets, gets and deletes a secret per service URL and kind', async () => {
    const url = freshUrl();
    expect(await keychain.get(url, 'access-token')).toBeNull();
    await keychain.set(url, 'access-token', 'fsu_first');
    await keychain.set(url, 'admin-token', 'fsa_admin');
    expect(await keychain.get(url, 'access-token')).toBe('fsu_first');
    expect(await keychain.get(`${url}/`, 'access-token')).toBe('fsu_first');
    await keychain.set(url, 'access-token', 'fsu_second');
    expect(await keychain.get(url, 'access-token')).toBe('fsu_second');
    expect(await keychain.get(freshUrl(), 'access-token')).toBeNull();

    expect(await keychain.delete(url, 'access-token')).toBe(true);
    expect(await keychain.delete(url, 'access-token')).toBe(false);
    expect(await keychain.get(url, 'access-token')).toBeNull();
    expect(await keychain.get(url, 'admin-token')).toBe('fsa_admin');
    await keychain.delete(url, 'admin-token');
  });

  it('files secrets under service "flowsync", account "<url>#<kind>", visible to other Secret Service clients', async () => {
    const url = freshUrl();
    await keychain.set(url, 'api-key', 'lin_api_visible_elsewhere');
    // secret-tool (libsecret-tools, installed by .ci/run) is libsecret's own CLI: the record is a real keychain item, not something private to keytar.
    const lookup = spawnSync(
      'secret-tool',
      ['lookup', 'service', 'flowsync', 'account', accountFor(url, 'api-key')],
      {
        encoding: 'utf8',
      },
    );
    expect(lookup.error).toBeUndefined();
    expect(lookup.stdout).toBe('lin_api_visible_elsewhere');
    expect(accountFor(url, 'api-key')).toBe(`${url}#api-key`);
    await keychain.delete(url, 'api-key');
  });

  it('the environment wins over the keychain, and writes still go to the keychain', async () => {
    const url = freshUrl();
    const store = new LayeredSecretStore(keychain, { FLOWSYNC_TOKEN: 'from-env', FLOWSYNC_ADMIN_TOKEN: '' });
    await keychain.set(url, 'access-token', 'from-keychain');
    await keychain.set(url, 'admin-token', 'admin-from-keychain');
    expect(await store.get(url, 'access-token')).toBe('from-env');
    expect(await store.get(url, 'admin-token')).toBe('admin-from-keychain');
    await store.set(url, 'api-key', 'lin_api_written');
    expect(await keychain.get(url, 'api-key')).toBe('lin_api_written');
    for (const kind of ['access-token', 'admin-token', 'api-key'] as const) await keychain.delete(url, kind);
  });

  it('gives the client the admin token for operator functions and the user token for the rest', async () => {
    const url = freshUrl();
    const auth = secretStoreAuth(keychain, url);
    expect(await auth('any')).toBeNull();
    await keychain.set(url, 'admin-token', 'fsa_x');
    expect(await auth('any')).toEqual({ scheme: 'Admin', token: 'fsa_x' });
    await keychain.set(url, 'access-token', 'fsu_x');
    expect(await auth('any')).toEqual({ scheme: 'Bearer', token: 'fsu_x' });
    expect(await auth('admin')).toEqual({ scheme: 'Admin', token: 'fsa_x' });
    await keychain.delete(url, 'admin-token');
    await keychain.delete(url, 'access-token');
  });

  it('shows a secret only as its first and last four characters', () => {
    expect(maskSecret('lin_api_0123456789abcdef')).toBe('lin_…cdef');
    expect(maskSecret('short')).toBe('…');
  });
});
