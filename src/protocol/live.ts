import { z } from 'zod';
import { baggageSchema } from './common.ts';
import { servicePathSchema } from './paths.ts';

/*
 * A live team (flowsync's own service, announced by `capabilities.live_changes`): an agent holds one call to
 * `changes` at a time, which the service answers as soon as a flow of the agent's repositories is written after
 * the agent's cursor, or after `wait_ms` with nothing. A long-poll rather than server-sent events: it is one more
 * function, so it passes the same door as every other (token, envelope, schema, limits, retries), and a cut
 * connection is only a call that failed, sent again from the same cursor.
 */

/** The longest the service keeps a call to `changes` open: under every idle time-out between (30 s here). */
export const CHANGES_WAIT_MAX_MS = 25_000;
/** Repositories one call watches at most, and flows one answer names at most (more: `more` is true). */
export const CHANGES_REPOS_MAX = 100;
export const CHANGES_PAGE_MAX = 1_000;

const name = z.string().min(1).max(200);

export const changesArgsSchema = z.strictObject({
  baggage: baggageSchema,
  repos: z
    .array(z.strictObject({ repo_owner: name, repo_name: name }))
    .min(1)
    .max(CHANGES_REPOS_MAX),
  /** The `cursor` of the last answer; null (or one the service cannot read) for a first call: `gap` says so. */
  after: z.string().max(100).nullable(),
  /** How long the service may hold the call when nothing changed (default 0: answer at once). */
  wait_ms: z.int().min(0).max(CHANGES_WAIT_MAX_MS).optional(),
});

export const flowChangeSchema = z.looseObject({
  repo_owner: name,
  repo_name: name,
  flow_path: servicePathSchema,
  /** The flow's aggregate hash now, as `list_flows` gives it; null when it holds no file any more. */
  hash: z.string().max(200).nullable(),
  /** Who wrote its newest version, as the history says it (the writer's own label). */
  written_by: z.string().max(400).nullable(),
});
export type FlowChange = z.infer<typeof flowChangeSchema>;

export const changesValueSchema = z.looseObject({
  /** Where the next call starts: everything of the repositories up to it is in this answer or an earlier one. */
  cursor: z.string().min(1).max(100),
  /**
   * The service cannot say what changed since `after` (a first call, a cursor of another database or older than its
   * history): the caller looks at every flow once (`list_flows`), then goes on from `cursor`.
   */
  gap: z.boolean(),
  /** The flows of the repositories written after `after` (each once, as it is now), oldest change first. */
  changes: z.array(flowChangeSchema).max(CHANGES_PAGE_MAX),
  /** More changes wait after `cursor`: call again at once. */
  more: z.boolean(),
});
export type ChangesValue = z.infer<typeof changesValueSchema>;
