import { createCipheriv, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/service.ts';

const DECRYPT = 'crypto/decrypt_aes_gcm/run';
let svc: TestService;
beforeAll(async () => {
  svc = await startTestService();
});
afterAll(async () => {
  await svc.close();
});

function encrypt(plain: Buffer, keyBytes = 32, ivBytes = 12, tagBytes = 16) {
  const key = randomBytes(keyBytes);
  const iv = randomBytes(ivBytes);
  const cipher = createCipheriv(`aes-${keyBytes * 8}-gcm` as 'aes-256-gcm', key, iv, {
    authTagLength: tagBytes,
  });
  const ciphertext = Buffer.concat([cipher.update(plain), cipher.final()]);
  return {
    ciphertext: ciphertext.toString('base64'),
    iv: iv.toString('base64'),
    key: key.toString('base64'),
    tag: cipher.getAuthTag().toString('base64'),
  };
}

describe('decrypt_aes_gcm', () => {
  it.each([16, 24, 32])('round-trips UTF-8 text with a %i-byte key', async (keyBytes) => {
    const text = 'secret flow: ✓ naïve';
    const reply = await svc.call(DECRYPT, encrypt(Buffer.from(text), keyBytes), 'user');
    expect(reply.statusCode).toBe(200);
    expect(reply.body.value).toEqual({
      plaintext: text,
      plaintext_base64: Buffer.from(text).toString('base64'),
    });
  });

  it('returns exact bytes, and null text, for binary plaintext', async () => {
    const bytes = Buffer.from([0xff, 0xfe, 0x00, 0x80]);
    const reply = await svc.call(DECRYPT, encrypt(bytes));
    expect(reply.body.value).toEqual({ plaintext: null, plaintext_base64: bytes.toString('base64') });
  });

  it('accepts an empty ciphertext, a 16-byte IV and a 12-byte tag', async () => {
    const reply = await svc.call(DECRYPT, encrypt(Buffer.alloc(0), 32, 16, 12));
    expect(reply.body.value).toEqual({ plaintext: '', plaintext_base64: '' });
  });

  it.each([
    ['a wrong tag', (p: ReturnType<typeof encrypt>) => ({ ...p, tag: randomBytes(16).toString('base64') })],
    ['a wrong key', (p: ReturnType<typeof encrypt>) => ({ ...p, key: randomBytes(32).toString('base64') })],
    ['a wrong IV', (p: ReturnType<typeof encrypt>) => ({ ...p, iv: randomBytes(12).toString('base64') })],
  ])('refuses %s with one fixed message and no output', async (_name, spoil) => {
    const reply = await svc.call(DECRYPT, spoil(encrypt(Buffer.from('top secret'))));
    expect(reply.statusCode).toBe(422);
    expect(reply.body.errorMessage).toBe(
      'Decryption failed: the key, IV or tag does not match the ciphertext.',
    );
    expect(reply.body).not.toHaveProperty('value');
  });

  it('refuses a key of the wrong size and a short tag (422), bad base64 (400)', async () => {
    const good = encrypt(Buffer.from('x'));
    const shortKey = await svc.call(DECRYPT, { ...good, key: randomBytes(20).toString('base64') });
    expect(shortKey.statusCode).toBe(422);
    expect(shortKey.body.errorMessage).toContain('16, 24 or 32 bytes');
    const shortTag = await svc.call(DECRYPT, { ...good, tag: randomBytes(8).toString('base64') });
    expect(shortTag.statusCode).toBe(422);
    const notBase64 = await svc.call(DECRYPT, { ...good, ciphertext: 'not base64!!' });
    expect(notBase64.statusCode).toBe(400);
    expect(notBase64.body.errorData).toMatchObject({ issues: [{ path: ['ciphertext'] }] });
  });

  it('never writes the key or the plaintext to the log', async () => {
    const payload = encrypt(Buffer.from('plaintext-that-must-not-leak'));
    await svc.call(DECRYPT, payload);
    await svc.call(DECRYPT, { ...payload, tag: randomBytes(16).toString('base64') });
    const logs = svc.logs.join('\n');
    expect(logs).not.toContain(payload.key);
    expect(logs).not.toContain('plaintext-that-must-not-leak');
    expect(logs).toContain(DECRYPT);
  });
});
