import { z } from 'zod';

/** One zod issue as the service reports it in `errorData.issues`: where, and what is wrong. */
export const wireIssueSchema = z.looseObject({
  path: z.array(z.union([z.string(), z.number()])),
  message: z.string(),
  code: z.string().optional(),
});
export type WireIssue = z.infer<typeof wireIssueSchema>;

/**
 * The reply to every call. `status` is `success` or `error` (decided: the spec names only `success`).
 * `errorData` carries structured detail: `issues` for a refused schema, `reason` for a refused call. The spec says
 * "object"; its platform sends whatever value a function threw (`ConvexError("no")` gives a string), so any value
 * is read, and the client keeps an object's fields.
 */
export const envelopeSchema = z.looseObject({
  status: z.enum(['success', 'error']),
  value: z.unknown().optional(),
  errorMessage: z.string().optional(),
  errorData: z.unknown().optional(),
  logLines: z.array(z.string()).optional(),
});
export type Envelope = z.infer<typeof envelopeSchema>;

/**
 * The other shape of a reply (decided, issue 37): the platform the spec comes from answers errors of its own, around
 * the functions (its token check, body limit, overload and time-out layers), with a non-2xx code and `{code,
 * message}`, e.g. 429 `{code: "TooManyConcurrentRequests"}` (platform-wire.md, "Two reply shapes").
 */
export const systemErrorSchema = z.looseObject({ code: z.string(), message: z.string().optional() });

/** The request body: `{ args }`; a `format: "json"` field is accepted and ignored. */
export const requestBodySchema = z.strictObject({
  args: z.record(z.string(), z.unknown()),
  format: z.literal('json').optional(),
});

export const API_PREFIX = '/api/run/';

/** Machine-readable reasons in `errorData.reason`, one per HTTP code the service uses. */
export const ERROR_REASONS = {
  400: 'invalid_request',
  401: 'unauthenticated',
  403: 'forbidden',
  404: 'unknown_function',
  405: 'method_not_allowed',
  413: 'body_too_large',
  422: 'refused',
  500: 'internal',
  503: 'unavailable',
} as const;
export type ErrorReason = (typeof ERROR_REASONS)[keyof typeof ERROR_REASONS];

/** Turns zod issues into the wire form: never the offending value, which may be a secret. */
export function toWireIssues(issues: readonly z.core.$ZodIssue[]): WireIssue[] {
  return issues.map((issue) => ({
    path: issue.path.map((key) => (typeof key === 'number' ? key : String(key))),
    message: issue.message,
    code: issue.code,
  }));
}

/** One line naming each bad field, e.g. `args.flows.0.path: Invalid input: expected string`. */
export function describeIssues(issues: readonly WireIssue[], root = 'args'): string {
  return issues
    .map((issue) => `${[root, ...issue.path].join('.')}: ${issue.message}`)
    .slice(0, 5)
    .concat(issues.length > 5 ? [`and ${issues.length - 5} more`] : [])
    .join('; ');
}
