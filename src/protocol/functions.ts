import type { z } from 'zod';
import {
  addActivityArgsSchema,
  addActivityValueSchema,
  slugLogArgsSchema,
  slugLogValueSchema,
} from './logs.ts';
import {
  attachmentUpdateArgsSchema,
  attachmentUpdateValueSchema,
  issuesBatchArgsSchema,
  issuesBatchValueSchema,
  issuesSearchArgsSchema,
  issuesSearchValueSchema,
  keyCacheGetArgsSchema,
  keyCacheValueSchema,
  projectsGetArgsSchema,
  projectsListArgsSchema,
  projectsListValueSchema,
  storeWebhookArgsSchema,
  storeWebhookValueSchema,
  trackerProjectSchema,
  trackerUserSchema,
  usersListArgsSchema,
  usersListValueSchema,
  viewerArgsSchema,
  workflowStateCacheGetArgsSchema,
  workflowStateCacheUpsertArgsSchema,
  workflowStateCacheValueSchema,
} from './tracker.ts';
import { repoConfigRecordSchema, repoConfigUpdateArgsSchema } from './repo-config.ts';
import {
  flowFileRecordSchema,
  syncBatchArgsSchema,
  syncBatchValueSchema,
  syncInternalArgsSchema,
  syncInternalValueSchema,
  updateFileArgsSchema,
} from './flow-def.ts';
import {
  getByTaskKeyArgsSchema,
  syncTaskArgsSchema,
  syncTaskValueSchema,
  taskRecordSchema,
  taskUpdateArgsSchema,
  taskUpdateValueSchema,
} from './task.ts';
import { decryptArgsSchema, decryptValueSchema } from './crypto.ts';
import {
  capabilitiesArgsSchema,
  capabilitiesValueSchema,
  keepCopyArgsSchema,
  keepCopyValueSchema,
  fileVersionsArgsSchema,
  fileVersionsValueSchema,
  listDeletedArgsSchema,
  listDeletedValueSchema,
  listFilesArgsSchema,
  listFilesValueSchema,
  listFlowsArgsSchema,
  listFlowsValueSchema,
  restoreVersionArgsSchema,
  restoreVersionValueSchema,
  purgeHistoryArgsSchema,
  purgeHistoryValueSchema,
  versionContentArgsSchema,
  versionContentValueSchema,
} from './history.ts';
import { changesArgsSchema, changesValueSchema } from './live.ts';
import {
  inviteValueSchema,
  memberAddArgsSchema,
  memberInviteArgsSchema,
  memberListArgsSchema,
  memberListValueSchema,
  memberRemoveArgsSchema,
  memberRemoveValueSchema,
  memberRoleArgsSchema,
  memberRoleValueSchema,
  redeemInviteArgsSchema,
  redeemInviteValueSchema,
  tokenRevokeArgsSchema,
  tokenRevokeValueSchema,
  whoamiArgsSchema,
  whoamiValueSchema,
  renewTokenArgsSchema,
  renewTokenValueSchema,
  auditArgsSchema,
  auditValueSchema,
  type Scope,
} from './members.ts';

/** `private` (and `wh/`) functions are for operators; `public` and `action` ones for any signed-in caller. */
export type FunctionKind = 'action' | 'public' | 'private';
export type Access = 'admin' | 'any';
/**
 * When a call may be sent again after a failure. `safe`: repeating it leaves the same state (upserts by hash or
 * key, reads). `unsent-only`: it appends a record, so it is repeated only when the first request never left.
 */
export type RepeatPolicy = 'safe' | 'unsent-only';

function kindOf(path: string): FunctionKind {
  const segments = path.split('/');
  if (segments.includes('private')) return 'private';
  if (segments.includes('public')) return 'public';
  if (segments.includes('action') || segments.at(-1) === 'run') return 'action';
  throw new Error(`Function path has no kind segment: ${path}`);
}

function define<
  const P extends string,
  A extends z.ZodType<{ baggage: unknown }>,
  V extends z.ZodType,
  const G extends string,
  const M extends string,
>(spec: {
  number: number;
  path: P;
  group: G;
  method: M;
  summary: string;
  repeat: RepeatPolicy;
  /** Who may call it: a member of this role or above (members.ts), or an invite for redeem_invite alone. */
  scope: Scope;
  args: A;
  value: V;
}) {
  const kind = kindOf(spec.path);
  // The operator's scheme (`Admin`) for what only operators may call; the spec's `private` functions are theirs.
  if ((kind === 'private') !== (spec.scope === 'operator'))
    throw new Error(`${spec.path}: a private function is an operator's, and only they are`);
  return { ...spec, kind, access: (spec.scope === 'operator' ? 'admin' : 'any') as Access };
}

/** The 20 functions of the service, in the spec's order. The only list of them: everything derives from it. */
export const FUNCTIONS = [
  define({
    number: 1,
    path: 'svc/swarm_api_key/private/add_activity',
    group: 'apiKey',
    method: 'addActivity',
    summary: 'Record activity on an API key; key-created registers a personal API key (by its SHA-256)',
    repeat: 'unsent-only',
    scope: 'operator',
    args: addActivityArgsSchema,
    value: addActivityValueSchema,
  }),
  define({
    number: 2,
    path: 'svc/tracker/action/issues/search/run',
    group: 'tracker',
    method: 'searchIssues',
    summary: 'Search tracker issues by identifier, title and description, a page at a time',
    repeat: 'safe',
    scope: 'read',
    args: issuesSearchArgsSchema,
    value: issuesSearchValueSchema,
  }),
  define({
    number: 3,
    path: 'svc/tracker/action/projects/list/run',
    group: 'tracker',
    method: 'listProjects',
    summary: 'List tracker projects, a page at a time',
    repeat: 'safe',
    scope: 'read',
    args: projectsListArgsSchema,
    value: projectsListValueSchema,
  }),
  define({
    number: 4,
    path: 'svc/slug/public/log',
    group: 'slug',
    method: 'log',
    summary: 'Append a slug event (init-worktree-created) to the slug log',
    repeat: 'unsent-only',
    scope: 'write',
    args: slugLogArgsSchema,
    value: slugLogValueSchema,
  }),
  define({
    number: 5,
    path: 'wh/tracker/private/store_webhook',
    group: 'webhooks',
    method: 'storeWebhook',
    summary: 'Store an inbound tracker webhook and apply it to the tracker store',
    repeat: 'unsent-only',
    scope: 'operator',
    args: storeWebhookArgsSchema,
    value: storeWebhookValueSchema,
  }),
  define({
    number: 6,
    path: 'wh/tracker/private/handle_attachment_update',
    group: 'webhooks',
    method: 'handleAttachmentUpdate',
    summary: 'Record an attachment created, updated or removed on a tracker issue',
    repeat: 'safe',
    scope: 'operator',
    args: attachmentUpdateArgsSchema,
    value: attachmentUpdateValueSchema,
  }),
  define({
    number: 7,
    path: 'svc/repo_config/public/update',
    group: 'repoConfig',
    method: 'update',
    summary: "Replace a repository's configuration (by owner and name)",
    repeat: 'safe',
    scope: 'write',
    args: repoConfigUpdateArgsSchema,
    value: repoConfigRecordSchema,
  }),
  define({
    number: 8,
    path: 'svc/flow_def/action/sync_batch/run',
    group: 'flowDef',
    method: 'syncBatch',
    summary: 'Upsert flows and their files for a repository, in one transaction',
    repeat: 'safe',
    scope: 'write',
    args: syncBatchArgsSchema,
    value: syncBatchValueSchema,
  }),
  define({
    number: 9,
    path: 'svc/flow_def/private/sync_internal',
    group: 'flowDef',
    method: 'syncInternal',
    summary: 'Upsert the files of one flow of a repository known by id',
    repeat: 'safe',
    scope: 'operator',
    args: syncInternalArgsSchema,
    value: syncInternalValueSchema,
  }),
  define({
    number: 10,
    path: 'svc/task/action/update/run',
    group: 'task',
    method: 'update',
    summary: "Set a task's status and/or priority, optionally on all its sub-tasks",
    repeat: 'safe',
    scope: 'write',
    args: taskUpdateArgsSchema,
    value: taskUpdateValueSchema,
  }),
  define({
    number: 11,
    path: 'svc/tracker/private/workflow_state_cache_upsert',
    group: 'tracker',
    method: 'workflowStateCacheUpsert',
    summary: "Replace a team's cached workflow states",
    repeat: 'safe',
    scope: 'operator',
    args: workflowStateCacheUpsertArgsSchema,
    value: workflowStateCacheValueSchema,
  }),
  define({
    number: 12,
    path: 'svc/tracker/action/issues/batch/run',
    group: 'tracker',
    method: 'batchIssues',
    summary: 'Read tracker issues by identifier; unknown ones are listed as missing',
    repeat: 'safe',
    scope: 'read',
    args: issuesBatchArgsSchema,
    value: issuesBatchValueSchema,
  }),
  define({
    number: 13,
    path: 'svc/tracker/action/projects/get/run',
    group: 'tracker',
    method: 'getProject',
    summary: 'Read one tracker project by id',
    repeat: 'safe',
    scope: 'read',
    args: projectsGetArgsSchema,
    value: trackerProjectSchema,
  }),
  define({
    number: 14,
    path: 'svc/task/action/sync_task/run',
    group: 'task',
    method: 'syncTask',
    summary: 'Create or refresh a task and its sub-tasks from the tracker store',
    repeat: 'safe',
    scope: 'write',
    args: syncTaskArgsSchema,
    value: syncTaskValueSchema,
  }),
  define({
    number: 15,
    path: 'crypto/decrypt_aes_gcm/run',
    group: 'crypto',
    method: 'decryptAesGcm',
    summary: 'Decrypt AES-GCM (base64 ciphertext, iv, key and tag)',
    repeat: 'safe',
    scope: 'read',
    args: decryptArgsSchema,
    value: decryptValueSchema,
  }),
  define({
    number: 16,
    path: 'svc/tracker/private/key_cache_get_by_uuid',
    group: 'tracker',
    method: 'keyCacheGetByUuid',
    summary: "Map a tracker issue's UUID and team UUID to its key (null when unknown)",
    repeat: 'safe',
    scope: 'operator',
    args: keyCacheGetArgsSchema,
    value: keyCacheValueSchema,
  }),
  define({
    number: 17,
    path: 'svc/tracker/action/users/viewer/run',
    group: 'tracker',
    method: 'viewer',
    summary: 'The tracker user who owns the personal API key',
    repeat: 'safe',
    scope: 'read',
    args: viewerArgsSchema,
    value: trackerUserSchema,
  }),
  define({
    number: 18,
    path: 'svc/task/private/get_by_task_key',
    group: 'task',
    method: 'getByTaskKey',
    summary: 'Read a task by key within a team',
    repeat: 'safe',
    scope: 'operator',
    args: getByTaskKeyArgsSchema,
    value: taskRecordSchema,
  }),
  define({
    number: 19,
    path: 'svc/flow_def/public/update_file',
    group: 'flowDef',
    method: 'updateFile',
    summary: "Replace one flow file's content by its id",
    repeat: 'safe',
    scope: 'write',
    args: updateFileArgsSchema,
    value: flowFileRecordSchema,
  }),
  define({
    number: 20,
    path: 'svc/tracker/private/workflow_state_cache_get_by_team',
    group: 'tracker',
    method: 'workflowStateCacheGetByTeam',
    summary: "Read a team's cached workflow states",
    repeat: 'safe',
    scope: 'operator',
    args: workflowStateCacheGetArgsSchema,
    value: workflowStateCacheValueSchema,
  }),
] as const;

/**
 * flowsync's own service's functions beyond the spec's 20 (history, listing, restore, capabilities): optional for
 * any client, numbered after the spec's. A service of the spec alone does not know them (any answer but a
 * capabilities value to `capabilities` says so: src/client/capabilities.ts), and the agent then
 * keeps to the 20 (it asks `capabilities` once per service).
 */
export const EXTENSION_FUNCTIONS = [
  define({
    number: 21,
    path: 'svc/flow_def/public/capabilities',
    group: 'flowDef',
    method: 'capabilities',
    summary:
      'What this service does beyond the spec: bases (conflicts instead of overwrites), history and its retention',
    repeat: 'safe',
    scope: 'read',
    args: capabilitiesArgsSchema,
    value: capabilitiesValueSchema,
  }),
  define({
    number: 22,
    path: 'svc/flow_def/public/list_flows',
    group: 'flowDef',
    method: 'listFlows',
    summary: "A repository's flows with each flow's aggregate hash and file count",
    repeat: 'safe',
    scope: 'read',
    args: listFlowsArgsSchema,
    value: listFlowsValueSchema,
  }),
  define({
    number: 23,
    path: 'svc/flow_def/public/list_files',
    group: 'flowDef',
    method: 'listFiles',
    summary:
      "A repository's (or a flow's) files: hash, size, who wrote them and when; content on request; paged",
    repeat: 'safe',
    scope: 'read',
    args: listFilesArgsSchema,
    value: listFilesValueSchema,
  }),
  define({
    number: 24,
    path: 'svc/flow_def/public/file_versions',
    group: 'flowDef',
    method: 'fileVersions',
    summary: "A file's versions, newest first, deletions included (kept 30 days by default)",
    repeat: 'safe',
    scope: 'read',
    args: fileVersionsArgsSchema,
    value: fileVersionsValueSchema,
  }),
  define({
    number: 25,
    path: 'svc/flow_def/public/version_content',
    group: 'flowDef',
    method: 'versionContent',
    summary: "One version's content",
    repeat: 'safe',
    scope: 'read',
    args: versionContentArgsSchema,
    value: versionContentValueSchema,
  }),
  define({
    number: 26,
    path: 'svc/flow_def/action/restore_version/run',
    group: 'flowDef',
    method: 'restoreVersion',
    summary: 'Restore a version: a new version whose content is the old one (a deletion restored deletes)',
    repeat: 'safe',
    scope: 'write',
    args: restoreVersionArgsSchema,
    value: restoreVersionValueSchema,
  }),
  define({
    number: 27,
    path: 'svc/tracker/private/users_list',
    group: 'tracker',
    method: 'usersList',
    summary:
      "The tracker's users (as the webhooks delivered them), or those of one email: whom a personal API key is registered to",
    repeat: 'safe',
    scope: 'operator',
    args: usersListArgsSchema,
    value: usersListValueSchema,
  }),
  define({
    number: 28,
    path: 'svc/flow_def/private/purge_history',
    group: 'flowDef',
    method: 'purgeHistory',
    summary:
      "Remove a file's past versions (all but the current one, or one) from the history; a tombstone says who and when",
    repeat: 'safe',
    scope: 'operator',
    args: purgeHistoryArgsSchema,
    value: purgeHistoryValueSchema,
  }),
  define({
    number: 29,
    path: 'svc/flow_def/public/list_deleted',
    group: 'flowDef',
    method: 'listDeleted',
    summary: "A repository's files whose latest version is a deletion: who deleted them and when; paged",
    repeat: 'safe',
    scope: 'read',
    args: listDeletedArgsSchema,
    value: listDeletedValueSchema,
  }),
  define({
    number: 30,
    path: 'svc/flow_def/action/keep_copy/run',
    group: 'flowDef',
    method: 'keepCopy',
    summary:
      "Keep a checkout's bytes of a file as a version of its history, marked as its conflict copy (not the current one)",
    repeat: 'unsent-only',
    scope: 'write',
    args: keepCopyArgsSchema,
    value: keepCopyValueSchema,
  }),
  define({
    number: 31,
    path: 'svc/members/public/whoami',
    group: 'members',
    method: 'whoami',
    summary: "Who the call's credential is: the member, their role, the token's id and expiry",
    repeat: 'safe',
    scope: 'read',
    args: whoamiArgsSchema,
    value: whoamiValueSchema,
  }),
  define({
    number: 32,
    path: 'svc/members/action/redeem_invite/run',
    group: 'members',
    method: 'redeemInvite',
    summary: "Exchange a one-time invite (the call's credential) for the member's own token, shown once",
    repeat: 'unsent-only',
    scope: 'invite',
    args: redeemInviteArgsSchema,
    value: redeemInviteValueSchema,
  }),
  define({
    number: 33,
    path: 'svc/members/private/add',
    group: 'members',
    method: 'add',
    summary: 'Add a member with a role (read, write, operator) and make their one-time invite (24 h)',
    repeat: 'unsent-only',
    scope: 'operator',
    args: memberAddArgsSchema,
    value: inviteValueSchema,
  }),
  define({
    number: 34,
    path: 'svc/members/private/invite',
    group: 'members',
    method: 'invite',
    summary: 'Another one-time invite for a member (another device of theirs)',
    repeat: 'unsent-only',
    scope: 'operator',
    args: memberInviteArgsSchema,
    value: inviteValueSchema,
  }),
  define({
    number: 35,
    path: 'svc/members/private/list',
    group: 'members',
    method: 'list',
    summary: "The members, their roles and tokens (ids only), the shared tokens' members marked shared",
    repeat: 'safe',
    scope: 'operator',
    args: memberListArgsSchema,
    value: memberListValueSchema,
  }),
  define({
    number: 36,
    path: 'svc/members/private/remove',
    group: 'members',
    method: 'remove',
    summary: 'Remove a member: every token of theirs refused by every service process within 1 s',
    repeat: 'safe',
    scope: 'operator',
    args: memberRemoveArgsSchema,
    value: memberRemoveValueSchema,
  }),
  define({
    number: 37,
    path: 'svc/members/private/role',
    group: 'members',
    method: 'role',
    summary: "Change a member's role (never the last operator's)",
    repeat: 'safe',
    scope: 'operator',
    args: memberRoleArgsSchema,
    value: memberRoleValueSchema,
  }),
  define({
    number: 38,
    path: 'svc/members/private/revoke_token',
    group: 'members',
    method: 'revokeToken',
    summary: "Revoke one member token by its id (a lost laptop): the member's others go on working",
    repeat: 'safe',
    scope: 'operator',
    args: tokenRevokeArgsSchema,
    value: tokenRevokeValueSchema,
  }),
  define({
    number: 39,
    path: 'svc/flow_def/public/changes',
    group: 'flowDef',
    method: 'changes',
    summary:
      "The flows of some repositories written after a cursor; answered when one is (at most wait_ms): a live team's feed",
    repeat: 'safe',
    scope: 'read',
    args: changesArgsSchema,
    value: changesValueSchema,
  }),
  define({
    number: 40,
    path: 'svc/members/private/audit',
    group: 'members',
    method: 'audit',
    summary:
      'The audit log of operator actions and mass changes, newest first; with verify, its hash chain checked',
    repeat: 'safe',
    scope: 'operator',
    args: auditArgsSchema,
    value: auditValueSchema,
  }),
  define({
    number: 41,
    path: 'svc/members/public/renew_token',
    group: 'members',
    method: 'renewToken',
    summary:
      "Renew the call's own member token: same member, role and label; the old one works until the new one's first use (24 h at most)",
    repeat: 'unsent-only',
    scope: 'own',
    args: renewTokenArgsSchema,
    value: renewTokenValueSchema,
  }),
] as const;

/** Every function this code knows: the spec's 20, then the extensions. */
export const ALL_FUNCTIONS = [...FUNCTIONS, ...EXTENSION_FUNCTIONS] as const;

export type FunctionSpec = (typeof ALL_FUNCTIONS)[number];
export type FunctionPath = FunctionSpec['path'];
export type FunctionByPath<P extends FunctionPath> = Extract<FunctionSpec, { path: P }>;
/** What a caller writes: args as the schema accepts them (baggage may be left to the client). */
export type ArgsOf<P extends FunctionPath> = z.input<FunctionByPath<P>['args']>;
/** Args after parsing, as a function implementation receives them. */
export type ParsedArgsOf<P extends FunctionPath> = z.output<FunctionByPath<P>['args']>;
export type ValueOf<P extends FunctionPath> = z.output<FunctionByPath<P>['value']>;

const byPath: ReadonlyMap<string, FunctionSpec> = new Map(ALL_FUNCTIONS.map((fn) => [fn.path, fn]));

export function findFunction(path: string): FunctionSpec | undefined {
  return byPath.get(path);
}

export function isFunctionPath(path: string): path is FunctionPath {
  return byPath.has(path);
}
