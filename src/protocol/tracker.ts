import { z } from 'zod';
import {
  apiKeySchema,
  baggageSchema,
  isoTimeSchema,
  issuePaginationSchema,
  pageInfoSchema,
  projectPaginationSchema,
} from './common.ts';

const id = z.string().min(1).max(200);

// ---- Records the tracker functions return (loose: a different server may add fields) ----

export const trackerIssueSchema = z.looseObject({
  id: z.string(),
  identifier: z.string(),
  title: z.string(),
  description: z.string().nullable(),
  priority: z.number().nullable(),
  priority_label: z.string().nullable(),
  state_name: z.string().nullable(),
  team_id: z.string().nullable(),
  project_id: z.string().nullable(),
  parent_id: z.string().nullable(),
  assignee_id: z.string().nullable(),
  archived_at: z.string().nullable(),
  created_at: isoTimeSchema,
  updated_at: isoTimeSchema,
  attachments: z
    .array(z.looseObject({ id: z.string(), title: z.string().nullable(), url: z.string().nullable() }))
    .optional(),
});
export type TrackerIssue = z.infer<typeof trackerIssueSchema>;

export const trackerProjectSchema = z.looseObject({
  id: z.string(),
  name: z.string(),
  description: z.string().nullable(),
  state: z.string().nullable(),
  team_ids: z.array(z.string()),
  created_at: isoTimeSchema,
  updated_at: isoTimeSchema,
});
export type TrackerProject = z.infer<typeof trackerProjectSchema>;

export const trackerUserSchema = z.looseObject({
  id: z.string(),
  name: z.string().nullable(),
  email: z.string().nullable(),
});
export type TrackerUser = z.infer<typeof trackerUserSchema>;

/** A tracker user as the window and the CLI name one: "Ada Lovelace (ada@example.com)", else what is known. */
export function trackerUserName(user: TrackerUser): string {
  if (user.name && user.email) return `${user.name} (${user.email})`;
  return user.name ?? user.email ?? user.id;
}

export const workflowStateSchema = z.strictObject({
  id: id,
  name: z.string().min(1).max(200),
  normalized_name: z.string().min(1).max(200),
});
export type WorkflowState = z.infer<typeof workflowStateSchema>;

// ---- Tracker actions: need a registered personal API key ----

export const issuesSearchArgsSchema = z.strictObject({
  baggage: baggageSchema,
  api_key: apiKeySchema,
  query: z.string().max(500),
  pagination: issuePaginationSchema.optional(),
});
export const issuesSearchValueSchema = z.looseObject({
  nodes: z.array(trackerIssueSchema),
  pageInfo: pageInfoSchema,
});
export type IssuesSearchValue = z.infer<typeof issuesSearchValueSchema>;

export const issuesBatchArgsSchema = z.strictObject({
  baggage: baggageSchema,
  api_key: apiKeySchema,
  identifiers: z.array(z.string().min(1).max(100)).max(250),
});
export const issuesBatchValueSchema = z.looseObject({
  nodes: z.array(trackerIssueSchema),
  missing: z.array(z.string()),
});

export const projectsListArgsSchema = z.strictObject({
  baggage: baggageSchema,
  api_key: apiKeySchema,
  pagination: projectPaginationSchema.optional(),
});
export const projectsListValueSchema = z.looseObject({
  nodes: z.array(trackerProjectSchema),
  pageInfo: pageInfoSchema,
});

export const projectsGetArgsSchema = z.strictObject({
  baggage: baggageSchema,
  api_key: apiKeySchema,
  id: id,
});

export const viewerArgsSchema = z.strictObject({
  baggage: baggageSchema,
  api_key: apiKeySchema,
});

// ---- Tracker users (an operator function of flowsync's own service) ----

/** At most this many users in one answer of `users_list`: a picker's worth, not a directory export. */
export const USERS_LIST_MAX = 500;

/**
 * The tracker users the webhooks delivered, by name; `email`: only those of that address (trimmed, any case, as
 * git's `user.email` may write it). How an agent finds the user a personal API key is to be registered to.
 */
export const usersListArgsSchema = z.strictObject({
  baggage: baggageSchema,
  email: z.string().max(320).optional(),
});
export const usersListValueSchema = z.looseObject({ users: z.array(trackerUserSchema) });

// ---- Caches (operator functions) ----

export const workflowStateCacheUpsertArgsSchema = z.strictObject({
  baggage: baggageSchema,
  states: z
    .array(workflowStateSchema)
    .max(500)
    .refine((states) => new Set(states.map((s) => s.id)).size === states.length, {
      message: 'Workflow state ids must be unique',
    }),
  team_id: id,
});
export const workflowStateCacheGetArgsSchema = z.strictObject({
  baggage: baggageSchema,
  team_id: id,
});
/** A team's cached states; `updated_at` is null when the cache has never been filled for the team. */
export const workflowStateCacheValueSchema = z.looseObject({
  team_id: z.string(),
  states: z.array(workflowStateSchema),
  updated_at: isoTimeSchema.nullable(),
});
export type WorkflowStateCacheValue = z.infer<typeof workflowStateCacheValueSchema>;

export const keyCacheGetArgsSchema = z.strictObject({
  baggage: baggageSchema,
  tracker_task_uuid: id,
  tracker_team_uuid: id,
});
/** null on a miss: a cache that has no entry is not an error. */
export const keyCacheValueSchema = z
  .looseObject({
    task_key: z.string(),
    tracker_task_uuid: z.string(),
    tracker_team_uuid: z.string(),
  })
  .nullable();

// ---- Inbound webhooks (operator functions) ----

/**
 * The tracker's usual webhook body. The spec types `payload` as unknown, so the args accept any value and the
 * service parses it with this schema, refusing (422) what it cannot read.
 */
export const trackerWebhookBodySchema = z.looseObject({
  action: z.enum(['create', 'update', 'remove']),
  type: z.string().min(1),
  data: z.looseObject({ id: id }),
  createdAt: z.string().optional(),
});
export type TrackerWebhookBody = z.infer<typeof trackerWebhookBodySchema>;

export const storeWebhookArgsSchema = z.strictObject({
  baggage: baggageSchema,
  payload: z.unknown(),
  team: z.string().max(200),
  status: z.string().max(200),
});
export const storeWebhookValueSchema = z.looseObject({
  event_id: z.number(),
  type: z.string(),
  action: z.string(),
  applied: z.boolean(),
});

export const attachmentUpdateArgsSchema = z.strictObject({
  baggage: baggageSchema,
  payload: z.unknown(),
});
export const attachmentUpdateValueSchema = z.looseObject({
  attachment_id: z.string(),
  issue_id: z.string(),
  removed: z.boolean(),
});

// ---- What the service reads out of a webhook's `data` (the tracker's camelCase records) ----

const optionalText = z.string().max(100_000).nullish();
const reference = z.looseObject({ id: z.string() }).nullish();

/** An Issue as the tracker sends it; ids of related records come either flat (`teamId`) or nested (`team.id`). */
export const webhookIssueDataSchema = z.looseObject({
  id: id,
  identifier: z.string().min(1).max(100),
  title: z.string().max(1000),
  description: optionalText,
  priority: z.number().int().min(0).max(4).nullish(),
  priorityLabel: z.string().max(100).nullish(),
  state: z.looseObject({ name: z.string() }).nullish(),
  teamId: z.string().nullish(),
  team: reference,
  projectId: z.string().nullish(),
  project: reference,
  parentId: z.string().nullish(),
  parent: reference,
  assigneeId: z.string().nullish(),
  assignee: reference,
  archivedAt: z.string().nullish(),
  createdAt: z.string().optional(),
  updatedAt: z.string().optional(),
});
export type WebhookIssueData = z.infer<typeof webhookIssueDataSchema>;

export const webhookProjectDataSchema = z.looseObject({
  id: id,
  name: z.string().min(1).max(1000),
  description: optionalText,
  state: z.string().nullish(),
  teamIds: z.array(z.string()).optional(),
  createdAt: z.string().optional(),
  updatedAt: z.string().optional(),
});
export type WebhookProjectData = z.infer<typeof webhookProjectDataSchema>;

export const webhookUserDataSchema = z.looseObject({
  id: id,
  name: z.string().max(1000).nullish(),
  email: z.string().max(320).nullish(),
});
export type WebhookUserData = z.infer<typeof webhookUserDataSchema>;

/** `handle_attachment_update`'s payload: an Attachment webhook body. */
export const webhookAttachmentBodySchema = z.looseObject({
  action: z.enum(['create', 'update', 'remove']),
  type: z.literal('Attachment'),
  data: z.looseObject({
    id: id,
    issueId: id,
    title: z.string().max(1000).nullish(),
    url: z.string().max(4000).nullish(),
  }),
});
export type WebhookAttachmentBody = z.infer<typeof webhookAttachmentBodySchema>;

/** The tracker's priority numbers and the labels it shows for them. */
export const PRIORITY_LABELS = ['No priority', 'Urgent', 'High', 'Medium', 'Low'] as const;

/**
 * The team key of a task: `ENG` of `ENG-123`, the tracker's own prefix of its identifiers; null when the key has
 * none. Operators cache workflow states under it as often as under the tracker team's id (the README's example
 * did: `"team_id":"ENG"`), so a team's states are looked up under both (`workflowStateTeams`).
 */
export function teamKeyOf(taskKey: string): string | null {
  const match = /^([A-Za-z][A-Za-z0-9_]*)-\d+$/.exec(taskKey.trim());
  return match ? match[1]! : null;
}

/**
 * Where a task's workflow states may be cached, in the order they are read: under the tracker team's id, then
 * under the team's key. Each distinct name once; empty when the task has neither.
 */
export function workflowStateTeams(task: { task_key: string; team_id: string | null }): string[] {
  const keys = [task.team_id, teamKeyOf(task.task_key)].filter((key): key is string => Boolean(key));
  return [...new Set(keys)];
}
