import { z } from 'zod';

/** Tracing context carried in every call's args; the client fills it in when absent. */
export const baggageSchema = z.strictObject({
  trace_id: z.string().min(1).max(200),
  traffic_type: z.string().min(1).max(50),
});
export type Baggage = z.infer<typeof baggageSchema>;

/** A tracker personal API key presented with every `svc/tracker/action/...` call. */
export const apiKeySchema = z.strictObject({
  secret: z.string().min(8).max(500),
  type: z.literal('personal-api-key'),
});
export type ApiKey = z.infer<typeof apiKeySchema>;

export const MAX_PAGE_SIZE = 250;
export const DEFAULT_PAGE_SIZE = 50;

const pageSize = z.int().min(1).max(MAX_PAGE_SIZE);
const cursor = z.string().min(1).max(200);

export const issuePaginationSchema = z.strictObject({
  after: cursor.optional(),
  first: pageSize.optional(),
  includeArchived: z.boolean().optional(),
});
export const projectPaginationSchema = z.strictObject({
  after: cursor.optional(),
  first: pageSize.optional(),
});

export const pageInfoSchema = z.looseObject({
  hasNextPage: z.boolean(),
  endCursor: z.string().nullable(),
});
export type PageInfo = z.infer<typeof pageInfoSchema>;

/** A time stamp in milliseconds since the epoch, as callers of the log functions send it. */
export const timestampSchema = z.number().finite().nonnegative();

/** ISO-8601 time as the service writes it in records. */
export const isoTimeSchema = z.string();

/** A hex SHA-256 digest, lower case. */
export const sha256HexSchema = z
  .string()
  .regex(/^[0-9a-f]{64}$/, 'Expected a lower-case hex SHA-256 (64 characters)');
