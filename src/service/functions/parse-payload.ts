import type { z } from 'zod';
import { describeIssues, toWireIssues } from '../../protocol/index.ts';
import { CallRefused } from '../errors.ts';

/**
 * Reads a webhook payload (typed `unknown` on the wire) with the schema of what the service understands; what it
 * cannot read is refused (422) with each bad field named, and nothing is stored.
 */
export function parsePayload<Schema extends z.ZodType>(
  schema: Schema,
  payload: unknown,
  what: string,
): z.infer<Schema> {
  const parsed = schema.safeParse(payload);
  if (parsed.success) return parsed.data;
  const issues = toWireIssues(parsed.error.issues);
  throw new CallRefused(`The payload is not ${what}: ${describeIssues(issues, 'args.payload')}`, { issues });
}
