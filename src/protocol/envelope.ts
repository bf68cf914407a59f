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
 * The other shape of a reply: the platform the spec comes from answers errors of its own, around
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
  429: 'throttled',
  500: 'internal',
  503: 'unavailable',
} as const;
export type ErrorReason = (typeof ERROR_REASONS)[keyof typeof ERROR_REASONS];

/**
 * Turns zod issues into the wire form: never the offending value, which may be a secret; the message in a
 * person's words (plainIssue), not zod's ("Invalid input: expected nonoptional, received undefined").
 */
export function toWireIssues(issues: readonly z.core.$ZodIssue[]): WireIssue[] {
  return issues.map((issue) => ({
    path: issue.path.map((key) => (typeof key === 'number' ? key : String(key))),
    message: plainIssue(issue),
    code: issue.code,
  }));
}

/**
 * One line naming each bad field and what it should be, e.g. `args.flows.0.path: is missing (text is expected)`.
 * `root` names the whole (args, body, config); a field is named without it when there is one.
 */
export function describeIssues(issues: readonly WireIssue[], root = 'args'): string {
  return issues
    .map((issue) => [fieldName(root, issue.path), issue.message].filter(Boolean).join(': '))
    .slice(0, 5)
    .concat(issues.length > 5 ? [`and ${issues.length - 5} more`] : [])
    .join('; ');
}

/** `args.flows.0.path`, `background_jobs.0.description` (root ''), or the root itself for an issue of the whole. */
export function fieldName(root: string, path: readonly (string | number)[]): string {
  return [root, ...path].filter((part) => part !== '').join('.');
}

/** What a JSON value of each of zod's types is called in a person's words. */
const KINDS: Record<string, string> = {
  string: 'text',
  number: 'a number',
  int: 'a whole number',
  boolean: 'true or false',
  array: 'a list',
  object: 'an object',
  record: 'an object',
  null: 'null',
  bigint: 'a number',
};
const kind = (name: string) => KINDS[name] ?? name;

/**
 * A zod issue in a person's words: which value is expected, not zod's codes. Our own messages (`Cannot be empty`,
 * `At most 100 background jobs`) are kept. A message zod wrote is recognised by its shape, since an issue that
 * came over the wire (the service's `errorData.issues`) has only its message.
 */
export function plainIssue(issue: { code?: string; message: string; expected?: unknown }): string {
  const { message } = issue;
  const typed = /^Invalid input: expected (\w+), received (\w+)$/.exec(message);
  if (typed) {
    const [, expected, received] = typed;
    // zod says `nonoptional` for a required field that is absent (its JIT-compiled check): the field is missing.
    if (received === 'undefined')
      return expected === 'nonoptional' ? 'is missing' : `is missing (${kind(expected!)} is expected)`;
    return `must be ${kind(expected!)} (it is ${kind(received!)})`;
  }
  const unknown = /^Unrecognized keys?: (.+)$/.exec(message);
  if (unknown) return `unknown ${unknown[1]!.includes(',') ? 'fields' : 'field'} ${unknown[1]}`;
  const option = /^Invalid option: expected one of (.+)$/.exec(message);
  if (option) return `must be one of ${option[1]!.split('|').join(', ')}`;
  const size = /^Too (small|big): expected (\w+) to (?:have|be) ([<>]=?)(\d+)(?: (\w+))?$/.exec(message);
  if (size) {
    const [, , what, op, count, unit] = size;
    const most = op!.startsWith('<');
    const bound = op!.endsWith('=') ? Number(count) : Number(count) + (most ? -1 : 1);
    if (what === 'number' || what === 'int' || !unit)
      return `must be ${most ? 'at most' : 'at least'} ${bound}`;
    const units = unit === 'characters' ? 'character' : unit === 'items' ? 'item' : unit;
    return `must have ${most ? 'at most' : 'at least'} ${bound} ${units}${bound === 1 ? '' : 's'}`;
  }
  if (/^Invalid string: must match pattern /.test(message)) return 'is not in the expected form';
  if (message === 'Invalid input') return 'is not valid';
  return message.replace(/^Invalid input: /, '');
}
