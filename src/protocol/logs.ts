import { z } from 'zod';
import { baggageSchema, timestampSchema } from './common.ts';

export const keyActivityPayloadSchema = z.strictObject({
  type: z.literal('key-created'),
  hash: z.string().regex(/^[0-9a-f]{64}$/, 'Expected the hex SHA-256 of the key (64 lower-case characters)'),
  name: z.string().min(1).max(200),
  prefix_4: z.string().length(4),
  suffix_4: z.string().length(4),
  user_id: z.string().min(1).max(200),
});
export type KeyActivityPayload = z.infer<typeof keyActivityPayloadSchema>;

export const addActivityArgsSchema = z.strictObject({
  baggage: baggageSchema,
  api_key_tid: z.string().min(1).max(200),
  payload: keyActivityPayloadSchema,
  ts: timestampSchema,
});
/** `registered` is true when this call made the key known to the tracker actions, or moved it to another user (decided: docs/architecture.md, "Personal API keys"). */
export const addActivityValueSchema = z.looseObject({
  id: z.number(),
  registered: z.boolean(),
});

export const slugLogPayloadSchema = z.strictObject({
  slug: z.string().min(1).max(200),
  type: z.literal('init-worktree-created'),
});

export const slugLogArgsSchema = z.strictObject({
  baggage: baggageSchema,
  payload: slugLogPayloadSchema,
  slug: z.string().min(1).max(200),
  ts: timestampSchema,
  type: z.string().min(1).max(100),
});
export const slugLogValueSchema = z.looseObject({ id: z.number() });
