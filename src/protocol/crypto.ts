import { z } from 'zod';
import { baggageSchema } from './common.ts';

/** Every field is standard base64 (RFC 4648 with padding); sizes are checked by the service (422). */
export const decryptArgsSchema = z.strictObject({
  baggage: baggageSchema,
  ciphertext: z.base64().max(6 * 1024 * 1024),
  iv: z.base64().min(1).max(1024),
  key: z.base64().min(1).max(1024),
  tag: z.base64().min(1).max(64),
});
/** `plaintext` is the UTF-8 text, or null when the bytes are not valid UTF-8; `plaintext_base64` is exact. */
export const decryptValueSchema = z.looseObject({
  plaintext: z.string().nullable(),
  plaintext_base64: z.string(),
});
