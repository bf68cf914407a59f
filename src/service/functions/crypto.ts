import { createDecipheriv, type CipherGCMTypes } from 'node:crypto';
import { CallRefused } from '../errors.ts';
import type { Implementations } from './types.ts';

const CIPHERS: Record<number, CipherGCMTypes> = { 16: 'aes-128-gcm', 24: 'aes-192-gcm', 32: 'aes-256-gcm' };
const utf8 = new TextDecoder('utf-8', { fatal: true });

export function cryptoFunctions(): Implementations<'crypto/decrypt_aes_gcm/run'> {
  return {
    'crypto/decrypt_aes_gcm/run': (args) => {
      const key = Buffer.from(args.key, 'base64');
      const iv = Buffer.from(args.iv, 'base64');
      const tag = Buffer.from(args.tag, 'base64');
      const cipher = CIPHERS[key.length];
      if (!cipher) {
        throw new CallRefused(`key is ${key.length} bytes: AES-GCM needs a key of 16, 24 or 32 bytes.`, {
          path: ['key'],
        });
      }
      if (tag.length < 12 || tag.length > 16) {
        throw new CallRefused(`tag is ${tag.length} bytes: AES-GCM tags are 12 to 16 bytes (16 is usual).`, {
          path: ['tag'],
        });
      }
      if (iv.length === 0) throw new CallRefused('iv is empty: AES-GCM needs an IV (12 bytes is usual).');

      let plain: Buffer;
      try {
        const decipher = createDecipheriv(cipher, key, iv, { authTagLength: tag.length });
        decipher.setAuthTag(tag);
        plain = Buffer.concat([decipher.update(Buffer.from(args.ciphertext, 'base64')), decipher.final()]);
      } catch {
        // One fixed message whatever failed: the caller learns nothing about which part was wrong.
        throw new CallRefused('Decryption failed: the key, IV or tag does not match the ciphertext.');
      }
      let plaintext: string | null;
      try {
        plaintext = utf8.decode(plain);
      } catch {
        plaintext = null;
      }
      return { plaintext, plaintext_base64: plain.toString('base64') };
    },
  };
}
