import { createCipheriv, randomBytes } from 'node:crypto';
import type { RemoteClient } from './create-client.ts';
import { ProtocolError } from './errors.ts';

/**
 * Proves the client's user credentials work with one call that changes nothing: decrypt_aes_gcm is open to any
 * signed-in caller and stores nothing. Throws what the call throws (a RemoteError 401 for a wrong token), but a
 * success whose value has another shape than ours: the spec leaves it unknown, and the token was taken.
 */
export async function checkAccess(client: RemoteClient): Promise<void> {
  await decryptOnce(client).catch((error: unknown) => {
    if (error instanceof ProtocolError && error.otherValue) return;
    throw error;
  });
}

async function decryptOnce(client: RemoteClient): Promise<void> {
  const key = randomBytes(32);
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  const ciphertext = Buffer.concat([cipher.update('flowsync access check', 'utf8'), cipher.final()]);
  await client.crypto.decryptAesGcm({
    ciphertext: ciphertext.toString('base64'),
    iv: iv.toString('base64'),
    key: key.toString('base64'),
    tag: cipher.getAuthTag().toString('base64'),
  });
}
