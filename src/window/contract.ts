import { z } from 'zod';
import { AgentApiError, agentApiErrorSchema, type AgentApiErrorBody } from '../agent/index.ts';
import {
  issuesSearchValueSchema,
  pageInfoSchema,
  repoConfigRecordSchema,
  repoConfigSchema,
  repoOwnerSchema,
  repoSlugPartSchema,
  roleSchema,
  syncPhaseSchema,
  syncTaskValueSchema,
  taskUpdateValueSchema,
  trackerIssueSchema,
  trackerUserSchema,
  workflowStateCacheValueSchema,
} from '../protocol/index.ts';

/**
 * AgentApi: everything a window may ask of the agent, as one zod contract. The same implementation is served over
 * the loopback bridge (a browser) and Electron IPC (the desktop window); both validate every input and output
 * against these schemas, and the renderer gets its types from here.
 */

const root = z.string().min(1).max(4096);

export const repositoryViewSchema = z.object({
  root: z.string(),
  owner: z.string(),
  name: z.string(),
  flowRoots: z.array(z.string()),
  /** The owner and name set for it in Settings (the config file); null: read from its origin, else local/<folder>. */
  settings: z.object({ owner: z.string().nullable(), name: z.string().nullable() }),
  phase: syncPhaseSchema,
  message: z.string().nullable(),
  /**
   * Whether its user paused it (whatever `phase` says meanwhile: a scan of what changed, the folder missing), and
   * since when (ISO; null when not known). Paused: changes are counted as pending and sent on resume.
   */
  paused: z.boolean(),
  pausedSince: z.string().nullable(),
  /** None of its flow folders is there: the line that says so and where to fix it (the tray says it too); else null. */
  nothingToSync: z.string().nullable(),
  counts: z.object({
    flows: z.number(),
    files: z.number(),
    pending: z.number(),
    pendingFlows: z.number(),
    warnings: z.number(),
    rejected: z.number(),
    /** Files in conflict with the service's version: never shown as synced. */
    conflicts: z.number(),
    /** Files newer on the service, unchanged here (a teammate's edit): never shown as synced either. */
    behind: z.number(),
  }),
  progress: z
    .object({ stage: z.enum(['hashing', 'uploading']), done: z.number(), total: z.number() })
    .nullable(),
  lastSyncAt: z.string().nullable(),
  /** Deletions waiting for their user (more at once than the repository deletes without asking); 0: none. */
  heldDeletions: z.number(),
  /** Files on the service this checkout never had (a fresh state learns them first): settleNotInCheckout. */
  notInCheckout: z.number(),
  /**
   * Git's change sets held for their user on a shared service (`branch cleanup: 37 changed, 217
   * deleted`), with the teammates whose work they would change: settleGitChanges sends or keeps them. Empty: none.
   */
  gitChanges: z.array(z.object({ name: z.string(), changed: z.number(), deleted: z.number() })).optional(),
  teammates: z.array(z.string()).optional(),
  /** The checkout this repository is synced from instead of this one (a worktree, another clone); else null. */
  syncedFrom: z.string().nullable(),
  /** The branch the checkout is on (`main`, `detached at 1a2b3c4`); null outside a git repository. */
  branch: z.string().nullable(),
  /**
   * Its origin now names it otherwise (`to`: owner/name): synced under the old name until its user says to sync
   * it under the new one (addRepository with `rename`); `message` says so. Null otherwise.
   */
  rename: z.object({ to: z.string(), message: z.string() }).nullable(),
  /** Files not sent: `warning` is the code, `reason` says why in words and what to do (see describeWarning). */
  warnings: z.array(
    z.object({ flowPath: z.string(), path: z.string(), warning: z.string(), reason: z.string() }),
  ),
  rejected: z.array(z.object({ flowPath: z.string(), message: z.string() })),
  /** What is wrong with `.flowsync/repo-config.json` (it waits for its user: needsOf); null when nothing is. */
  configProblem: z.string().nullable(),
  /** Why the valid `.flowsync/repo-config.json` is not on the service yet (sent at the next look); else null. */
  configNotSent: z.string().nullable(),
});
export type RepositoryView = z.infer<typeof repositoryViewSchema>;

/** A repository's look at the service (lookNow): see AGENT_API.lookNow. */
export const lookViewSchema = z.object({
  root: z.string(),
  at: z.string().nullable(),
  live: z.boolean(),
  fresh: z.boolean(),
  failure: z.string().nullable(),
});
export type LookView = z.infer<typeof lookViewSchema>;

export const agentStatusSchema = z.object({
  serviceUrl: z.string(),
  embedded: z.boolean(),
  /** What this service cannot protect (a service of the spec alone: no history, no bases), in one line; else null. */
  serviceLimits: z.string().nullable(),
  repositories: z.array(repositoryViewSchema),
});
export type AgentStatus = z.infer<typeof agentStatusSchema>;

const secretSourceSchema = z.enum(['environment', 'keychain', 'embedded', 'none', 'unavailable']);

/**
 * A flow as the Sync screen lists it. `state`: refused (the service said no, `message` says why), pending (some
 * file differs from what the service acknowledged), not-sent (no file of it can be sent), else synced.
 */
export const flowViewSchema = z.object({
  flowPath: z.string(),
  name: z.string(),
  files: z.number(),
  pending: z.number(),
  notSent: z.number(),
  /** Files of the flow in conflict with the service's version. */
  conflicts: z.number(),
  /** Files of the flow newer on the service, untouched here (a teammate's edits): never "synced". */
  newer: z.number(),
  state: z.enum(['synced', 'pending', 'refused', 'not-sent', 'conflict', 'newer']),
  message: z.string().nullable(),
});
export type FlowView = z.infer<typeof flowViewSchema>;

/** One file of a flow: `reason` says why it is pending (deleted here) or not sent, and what to do. */
export const fileViewSchema = z.object({
  path: z.string(),
  state: z.enum(['synced', 'pending', 'not-sent', 'conflict', 'newer']),
  reason: z.string().nullable(),
});
export type FileView = z.infer<typeof fileViewSchema>;

/**
 * What happened, newest first in the window: files the service took (one entry each, or one `sent` entry with
 * counts for a large round), flows it refused, files in conflict with its version, files newly not sent (`message`: why, and what to do), and the
 * service going away and coming back.
 */
export const activityEntrySchema = z.object({
  id: z.number(),
  at: z.string(),
  root: z.string(),
  repository: z.string(),
  kind: z.enum([
    'created',
    'updated',
    'deleted',
    'sent',
    'refused',
    'conflict',
    'skipped',
    'offline',
    'unavailable',
    // The service no longer takes the token (a member removed, a token revoked or expired): never offline.
    'signed-out',
    'online',
    'missing',
    'paused',
    'resumed',
    // Its user settled something (a conflict, held deletions, files not in this checkout): what was done, and
    // where anything replaced on disk was kept.
    'settled',
    // Deletions held for being many: nothing deleted on the service until its user says so.
    'held',
    // A file newer on the service was changed here: a conflict now, said at once; message: its writer.
    'conflict-here',
    // The team's changes taken ("Take them", `resolve --newer`): what was written or deleted here.
    'taken',
  ]),
  flowPath: z.string().nullable(),
  path: z.string().nullable(),
  message: z.string().nullable(),
  counts: z
    .object({ flows: z.number(), created: z.number(), updated: z.number(), deleted: z.number() })
    .nullable(),
});
export type ActivityEntry = z.infer<typeof activityEntrySchema>;

export const settingsSchema = z.object({
  /** Empty: the embedded service. A change takes effect at the next start. */
  serviceUrl: z.string(),
  activeServiceUrl: z.string(),
  /** What chose the service in use: the config file's is the field; `--url` and FLOWSYNC_URL win over it. */
  activeServiceFrom: z.enum(['command line', 'environment', 'config file', 'embedded']),
  signedIn: z.object({ user: z.boolean(), admin: z.boolean() }),
  /**
   * Where each secret in use comes from, each on its own: the environment (FLOWSYNC_TOKEN, FLOWSYNC_ADMIN_TOKEN,
   * FLOWSYNC_API_KEY), the keychain, the embedded service (its own tokens), none, or unavailable (no keychain).
   */
  sources: z.object({ user: secretSourceSchema, admin: secretSourceSchema, apiKey: secretSourceSchema }),
  /** The personal API key as prefix…suffix, never whole; null when none is kept. */
  apiKey: z.string().nullable(),
  keychain: z.enum(['available', 'unavailable']),
});
export type Settings = z.infer<typeof settingsSchema>;

/**
 * Who the personal API key makes you in the tracker (its tasks are that user's). `user` null: the key is nobody's
 * (not registered, or registered to a name the tracker does not use), and `problem` says what to do. `choices`:
 * the tracker users it may be registered to instead (setKeyOwner), for an operator only. Asked of the service, so
 * apart from the settings, which are the agent's own and never wait for it.
 */
export const whoYouAreSchema = z.object({
  user: trackerUserSchema.nullable(),
  gitEmail: z.string().nullable(),
  choices: z.array(trackerUserSchema),
  problem: z.string().nullable(),
});
export type WhoYouAre = z.infer<typeof whoYouAreSchema>;

/**
 * Who the service takes this agent for: the member its token belongs to, their role and the token. Asked
 * of the service (whoami), so apart from the settings; null when the service has no members (the spec's, an older
 * flowsync) or the agent is not signed in.
 */
export const memberViewSchema = z.object({
  member: z.string(),
  role: roleSchema,
  /** A shared token (fsu_/fsa_): its writes show as "shared", not as this person's. */
  shared: z.boolean(),
  /** The token's public id (fsm_…); null for a shared token. */
  token: z.string().nullable(),
  /** What the token is for ("laptop"), as given when it was made. */
  label: z.string().nullable(),
  expiresAt: z.string().nullable(),
});
export type MemberView = z.infer<typeof memberViewSchema>;

/** Whether the agent starts when the user logs in, and the file that makes it (src/agent/start-at-login.ts). */
export const startAtLoginSchema = z.object({
  enabled: z.boolean(),
  /** The file exists but runs another flowsync (a moved install); enabling again points it at this one. */
  stale: z.boolean(),
  kind: z.enum(['systemd', 'xdg', 'launchd', 'startup-folder']),
  path: z.string(),
});

/**
 * The service's config a save (or a hand edit) was refused for: a teammate's newer one, who wrote it and when, and
 * the line status and the terminal say. Settled with settleRepoConfig.
 */
export const repoConfigConflictViewSchema = z.object({
  config: repoConfigSchema,
  writtenBy: z.string().nullable(),
  writtenAt: z.string(),
  line: z.string(),
});
export type RepoConfigConflictView = z.infer<typeof repoConfigConflictViewSchema>;

/**
 * The hash (SHA-256, hex) of `.flowsync/repo-config.json`'s bytes as getRepoConfig read them: the base a Save is
 * made on, so that a file changed on disk since (a hand edit) is a conflict, never written over. Null: no file.
 */
const repoConfigBaseSchema = z
  .string({ error: 'Required: the base getRepoConfig gave (null when there was no file)' })
  .regex(/^[0-9a-f]{64}$/, 'Not a base getRepoConfig gave: 64 hex digits, or null when there was no file')
  .nullable();

/** The file as it is now, changed since the screen loaded it: what a Save would have written over. */
export const repoConfigFileChangeSchema = z.object({
  /** Its hash now: the base a "take mine" is made on. Null: the file was deleted. */
  base: repoConfigBaseSchema,
  /** Its text now (null: no file), shown as it is when it is not a valid config. */
  text: z.string().nullable(),
  /** Its config, when it is a valid one. */
  config: repoConfigSchema.nullable(),
});
export type RepoConfigFileChange = z.infer<typeof repoConfigFileChangeSchema>;

export const repoConfigViewSchema = z.object({
  root: z.string(),
  /** Where the document lives: `<repository>/.flowsync/repo-config.json`. */
  path: z.string(),
  exists: z.boolean(),
  config: repoConfigSchema,
  /** The hash of the file's bytes as read here, which saveRepoConfig gets back; null: no file. */
  base: repoConfigBaseSchema,
  /** A teammate's newer config on the service, not overwritten; null: none. */
  conflict: repoConfigConflictViewSchema.nullable(),
});
export type RepoConfigView = z.infer<typeof repoConfigViewSchema>;

/**
 * A file the service refused to write because its version there changed since this checkout last synced it: who
 * changed it and when (as the service says), and whether the service still has it (`serviceHash` null: deleted
 * there) and whether this checkout does (`sentHash` null: deleted here).
 */
export const conflictViewSchema = z.object({
  flowPath: z.string(),
  path: z.string(),
  baseHash: z.string().nullable(),
  serviceHash: z.string().nullable(),
  sentHash: z.string().nullable(),
  /** What is on disk now (null: nothing): what "here" is said from (protocol's hereSide), never `sentHash`. */
  diskHash: z.string().nullable(),
  writtenBy: z.string().nullable(),
  writtenAt: z.string().nullable(),
  foundAt: z.string(),
  /** The service no longer has the version synced here (it went back in time): only "keep mine" is safe. */
  lost: z.boolean().optional(),
});
export type ConflictView = z.infer<typeof conflictViewSchema>;

/** A diff from one side of a conflict to another ('' when the same), or why it is not shown. */
const sideDiffSchema = z.union([z.object({ diff: z.string() }), z.object({ missing: z.string() })]);

/** A purge of a file's history, as the window and `flowsync history` show it. */
const historyPurgeView = z.object({
  version: z.number().nullable(),
  versions: z.number(),
  purgedAt: z.string(),
  purgedBy: z.string().nullable(),
});

const fileRef = z.object({ flowPath: z.string().min(1).max(4096), path: z.string().min(1).max(4096) });
/** Files whose service copy was not written to disk, each with why (the others were): a line each, for its user. */
/** What taking a teammate's newer version does here (protocol's incomingChange). */
const incomingChangeSchema = z.enum(['deleted', 'replaced', 'written']);
const notWritten = z.array(z.object({ flowPath: z.string(), path: z.string(), reason: z.string() }));
/**
 * Files whose bytes here were kept before the service's were written over them (an edit not sent): `where` in
 * words ("kept as version 57 in the service's history", "kept beside it as flows/ci/build.conflict-….yml").
 */
const kept = z.array(
  z.object({
    flowPath: z.string(),
    path: z.string(),
    version: z.number().nullable(),
    beside: z.string().nullable(),
    where: z.string(),
  }),
);

const method = <I extends z.ZodType, O extends z.ZodType>(input: I, output: O) => ({ input, output });
const none = z.object({});

export const AGENT_API = {
  status: method(none, agentStatusSchema),
  /**
   * `source`: sync the repository from this checkout instead of the one it is synced from now. `rename`: sync it
   * under the name its origin gives it now (the old name's files stay on the service).
   */
  addRepository: method(
    z.object({
      path: z.string().min(1).max(4096),
      source: z.boolean().optional(),
      rename: z.boolean().optional(),
    }),
    repositoryViewSchema,
  ),
  removeRepository: method(z.object({ root }), z.object({ removed: z.boolean() })),
  /**
   * A repository's flow folders (relative to it: `flows`, `apps/flows`), owner and name; empty owner or name: read
   * from its origin. Saved in the config file; its sync restarts with them.
   */
  setRepositorySettings: method(
    z.object({
      root,
      flowRoots: z.array(z.string().max(1024)).min(1, 'Give at least one flow folder, e.g. flows').max(100),
      owner: z.union([z.literal(''), repoOwnerSchema]),
      name: z.union([z.literal(''), repoSlugPartSchema]),
    }),
    repositoryViewSchema,
  ),
  pauseRepository: method(z.object({ root }), repositoryViewSchema),
  resumeRepository: method(z.object({ root }), repositoryViewSchema),
  syncNow: method(z.object({ root: root.optional() }), agentStatusSchema),
  /**
   * A fresh look at the service before "in sync" is said (`flowsync status`): each running repository's
   * quick check (or the one repository's), waited for at most 5 s, then the status. `looks`, per repository: when the
   * last look went through (ISO; null: never), whether the service's live feed is current, whether the service was
   * seen now, and why not when a look asked now did not go through (null: it did, or none was made: paused, offline).
   */
  lookNow: method(
    z.object({ root: root.optional() }),
    agentStatusSchema.extend({ looks: z.array(lookViewSchema) }),
  ),
  repositoryDetail: method(
    z.object({ root }),
    z.object({ root: z.string(), flows: z.array(flowViewSchema) }),
  ),
  flowFiles: method(
    z.object({ root, flowPath: z.string().min(1).max(4096) }),
    z.object({ root: z.string(), flowPath: z.string(), files: z.array(fileViewSchema) }),
  ),
  activity: method(none, z.object({ entries: z.array(activityEntrySchema) })),
  conflicts: method(
    z.object({ root }),
    z.object({
      root: z.string(),
      conflicts: z.array(conflictViewSchema),
      heldDeletions: z.number(),
      /** Files newer on the service and untouched here (behind, not a conflict): takeNewer takes them. */
      newer: z.array(conflictViewSchema),
    }),
  ),
  /**
   * "Take them": writes the service's copy of the files newer there (and untouched here) to disk. Nothing here is
   * lost: a file changed here since the last look is not written, and said in `notWritten`. A take that would
   * delete or overwrite more files here than the repository's deletion guard lets through takes nothing: `asked`
   * lists them, for its user to confirm (`confirmed`, with `files`: only those, on the service versions listed).
   */
  takeNewer: method(
    z.object({
      root,
      confirmed: z.boolean().optional(),
      files: z
        .array(
          fileRef.extend({
            serviceHash: z
              .string()
              .regex(/^[0-9a-f]{64}$/)
              .nullable(),
          }),
        )
        .max(100_000)
        .optional(),
    }),
    z.object({
      taken: z.array(z.object({ flowPath: z.string(), path: z.string(), change: incomingChangeSchema })),
      notWritten,
      asked: z.array(
        z.object({
          flowPath: z.string(),
          path: z.string(),
          change: incomingChangeSchema,
          serviceHash: z.string().nullable(),
          writtenBy: z.string().nullable(),
          writtenAt: z.string().nullable(),
        }),
      ),
    }),
  ),
  /**
   * Settles conflicts (all of the repository's when `files` is absent): `mine` sends this checkout's file on top of
   * the service's version, `theirs` writes the service's version to disk.
   */
  resolveConflicts: method(
    z.object({ root, side: z.enum(['mine', 'theirs']), files: z.array(fileRef).max(100_000).optional() }),
    z.object({ resolved: z.array(z.object({ flowPath: z.string(), path: z.string() })), notWritten, kept }),
  ),
  /**
   * A file in conflict as two diffs (git's unified format) from the version last synced here: to the service's
   * version and to the disk's; `missing` says why one is not shown (too large, no longer in the history).
   */
  compareConflict: method(
    z.object({ root, ...fileRef.shape }),
    z.object({ flowPath: z.string(), path: z.string(), toService: sideDiffSchema, toDisk: sideDiffSchema }),
  ),
  /** Every version the service keeps of a file (newest first), with who wrote it and when; a repository path. */
  fileHistory: method(
    z.object({ root, file: z.string().min(1).max(4096) }),
    z.object({
      flowPath: z.string(),
      path: z.string(),
      versions: z.array(
        z.object({
          version: z.number(),
          hash: z.string().nullable(),
          size: z.number(),
          writtenAt: z.string(),
          writtenBy: z.string().nullable(),
          current: z.boolean(),
          /** What a checkout had on disk when it took the service's version (never a current version). */
          conflictCopy: z.boolean(),
        }),
      ),
      /** What operators purged of it (newest first). */
      purges: z.array(historyPurgeView),
      /** When the service's size cap last removed older versions of the repository (cappedLine says it); or null. */
      capped: z.object({ at: z.string(), capBytes: z.number() }).nullable(),
    }),
  ),
  /**
   * An operator's purge of a file's past versions from the service's history (all but the current one, or
   * `version`), with the admin token: the tombstone it left.
   */
  purgeHistory: method(
    z.object({ root, file: z.string().min(1).max(4096), version: z.int().positive().optional() }),
    z.object({ flowPath: z.string(), path: z.string(), purge: historyPurgeView }),
  ),
  /** One of those versions' text (null: the version is a deletion), or why it is not shown (too large). */
  versionContent: method(
    z.object({ root, file: z.string().min(1).max(4096), version: z.int().positive() }),
    z.object({
      flowPath: z.string(),
      path: z.string(),
      version: z.number(),
      content: z.string().nullable(),
      tooLarge: z.string().nullable(),
    }),
  ),
  /**
   * Writes one of those versions to disk (a deletion removes the file): it is then sent as any edit (`sent`), or
   * the service holds it already (`current`), or the service holds another version than the one last synced here
   * (`conflict`: recorded, settled as any; `serviceWrittenBy` names who wrote the service's).
   */
  restoreVersion: method(
    z.object({ root, file: z.string().min(1).max(4096), version: z.int().positive() }),
    z.object({
      flowPath: z.string(),
      path: z.string(),
      version: z.number(),
      deleted: z.boolean(),
      outcome: z.enum(['sent', 'current', 'conflict']),
      serviceWrittenBy: z.string().nullable(),
      /** Where what was on disk was kept, in words, when it was an edit not sent (else null). */
      kept: z.string().nullable(),
    }),
  ),
  /**
   * Git's change sets held on a shared service: sent to the team (`send`: its edits and deletions go, the
   * deletions whatever the guard), or kept here (`keep`: not sent while the files stay as git left them, and no
   * longer asked about). `name`: that set only (a card of the window), else every one. Returns the sets it was about
   * and the teammates they concern.
   */
  settleGitChanges: method(
    z.object({ root, choice: z.enum(['send', 'keep']), name: z.string().min(1).max(4096).optional() }),
    z.object({
      sets: z.array(z.object({ name: z.string(), changed: z.number(), deleted: z.number() })),
      teammates: z.array(z.string()),
    }),
  ),
  /**
   * Git's change sets held, each with its files as git left them (`deleted`: git removed it), and the
   * teammates whose work they would change: what a card lists and its confirm names.
   */
  heldGitChanges: method(
    z.object({ root }),
    z.object({
      sets: z.array(
        z.object({
          name: z.string(),
          changed: z.number(),
          deleted: z.number(),
          files: z.array(z.object({ flowPath: z.string(), path: z.string(), deleted: z.boolean() })),
        }),
      ),
      teammates: z.array(z.string()),
    }),
  ),
  /** Held deletions: sent to the service (`delete`), or the files put back on disk from its copy (`restore`). */
  settleDeletions: method(
    z.object({ root, choice: z.enum(['delete', 'restore']) }),
    z.object({ deleted: z.number(), restored: z.number(), notWritten, kept }),
  ),
  /**
   * Files on the service that this checkout never had ("12 files on the service are not in this checkout": a fresh
   * state, CI, a rebuilt state learns them first), with who wrote each and when. Asks the service.
   */
  notInCheckout: method(
    z.object({ root }),
    z.object({
      root: z.string(),
      files: z.array(
        z.object({
          flowPath: z.string(),
          path: z.string(),
          /** The version listed: what a deletion of it is based on. */
          hash: z.string(),
          writtenBy: z.string().nullable(),
          writtenAt: z.string(),
        }),
      ),
    }),
  ),
  /**
   * Those files deleted on the service (`delete`: explicit deletions on the version listed, as any deletion), or
   * written to disk from the service's copy (`restore`); `skipped`: files not written, and why. `files`: only
   * those, as listed (a file written on the service since is then a conflict, not deleted); default: all, for
   * `restore` only: a deletion names its files (one click must never delete files it did not name). `confirmed`: its
   * user confirmed this list; more files than the deletion guard lets through are refused without it.
   */
  settleNotInCheckout: method(
    z.object({
      root,
      choice: z.enum(['delete', 'restore']),
      files: z
        .array(fileRef.extend({ hash: z.string().regex(/^[0-9a-f]{64}$/) }))
        .max(100_000)
        .optional(),
      confirmed: z.boolean().optional(),
    }),
    z.object({
      deleted: z.number(),
      restored: z.number(),
      skipped: z.array(z.object({ flowPath: z.string(), path: z.string(), reason: z.string() })),
    }),
  ),
  /** The open tasks assigned to the owner of the personal API key (the tracker's viewer). */
  myTasks: method(
    z.object({ after: z.string().min(1).max(200).optional() }),
    z.object({ viewer: trackerUserSchema, nodes: z.array(trackerIssueSchema), pageInfo: pageInfoSchema }),
  ),
  searchTasks: method(
    z.object({
      query: z.string().max(500),
      after: z.string().min(1).max(200).optional(),
      first: z.int().min(1).max(250).optional(),
    }),
    issuesSearchValueSchema,
  ),
  openTask: method(
    z.object({ taskKey: z.string().min(1).max(100), root: root.optional() }),
    syncTaskValueSchema,
  ),
  updateTask: method(
    z
      .object({
        taskKey: z.string().min(1).max(100),
        status: z.string().trim().min(1).max(100).optional(),
        priority: z.string().trim().min(1).max(100).optional(),
        recursive: z.boolean().optional(),
      })
      .refine((input) => input.status !== undefined || input.priority !== undefined, {
        message: 'Choose a status, a priority, or both',
        path: ['status'],
      }),
    taskUpdateValueSchema,
  ),
  /** The states of a task's team, cached under the tracker team's id or under its key (`ENG` of `ENG-1`). */
  workflowStates: method(
    z.object({ taskKey: z.string().min(1).max(100), teamId: z.string().min(1).max(200).nullable() }),
    workflowStateCacheValueSchema,
  ),
  getRepoConfig: method(z.object({ root }), repoConfigViewSchema),
  /**
   * Saves the config on the file as getRepoConfig read it (`base`). The file changed on disk since (a hand edit) is
   * `fileChanged`: nothing written, nothing sent; `takeMine` then saves over it on the base it names, its content
   * kept beside it first (`keptAs`). Else sent on the base last synced and written: a teammate's newer config on the
   * service is a `conflict` (the file is written, the service keeps theirs: `record` null); any other failure saves
   * nothing.
   */
  saveRepoConfig: method(
    z.object({
      root,
      config: repoConfigSchema,
      base: repoConfigBaseSchema,
      takeMine: z.boolean().optional(),
    }),
    z.object({
      path: z.string(),
      record: repoConfigRecordSchema.nullable(),
      conflict: repoConfigConflictViewSchema.nullable(),
      fileChanged: repoConfigFileChangeSchema.nullable(),
      /** Where `takeMine` kept the file's content (repository-relative), or null. */
      keptAs: z.string().nullable(),
    }),
  ),
  /**
   * Take the file's (it changed since the screen loaded it): the file stays as it is; the screen's unsaved `config`
   * is kept beside it (`keptAs`, repository-relative), and the view is the file's.
   */
  takeRepoConfigFile: method(
    z.object({ root, config: repoConfigSchema }),
    repoConfigViewSchema.extend({ keptAs: z.string() }),
  ),
  /** Settles a repo config conflict: `theirs` writes the service's config to the file, `mine` sends the file's on it. */
  settleRepoConfig: method(
    z.object({ root, keep: z.enum(['mine', 'theirs']) }),
    /** `keptAs`: where `theirs` kept this checkout's config (repository-relative), or null. */
    repoConfigViewSchema.extend({ keptAs: z.string().nullable() }),
  ),
  getSettings: method(none, settingsSchema),
  saveSettings: method(z.object({ serviceUrl: z.string().max(2000) }), settingsSchema),
  signIn: method(
    z.object({ token: z.string().trim().min(8).max(500), admin: z.boolean().optional() }),
    settingsSchema,
  ),
  signOut: method(none, settingsSchema),
  /**
   * Redeems an operator's one-time invite (fsi_…) for this person's own token, kept in the keychain (both kinds for
   * an operator); the invite is checked for a whole paste before it is sent, and works once.
   */
  joinWithInvite: method(
    z.object({
      invite: z.string().trim().min(8).max(500),
      label: z.string().trim().min(1).max(60).optional(),
    }),
    memberViewSchema,
  ),
  /** Who the service takes this agent for; null: a service without members, or not signed in. */
  whoAmI: method(none, memberViewSchema.nullable()),
  /**
   * Keeps the personal API key and, with an admin token, registers it to the tracker user of git's user.email
   * (when it is no tracker user's yet); when nobody has that email, whoYouAre's `choices` are whom to pick.
   */
  setApiKey: method(z.object({ secret: z.string().trim().min(8).max(500) }), settingsSchema),
  /** Who the personal API key makes you in the tracker; null without a key. */
  whoYouAre: method(none, whoYouAreSchema.nullable()),
  /** Registers the personal API key to this tracker user (one of whoYouAre's `choices`): "this is me". */
  setKeyOwner: method(z.object({ userId: z.string().min(1).max(200) }), whoYouAreSchema),
  getStartAtLogin: method(none, startAtLoginSchema),
  setStartAtLogin: method(z.object({ enabled: z.boolean() }), startAtLoginSchema),
} as const;

export type AgentApiMethod = keyof typeof AGENT_API;
export type AgentApiInput<M extends AgentApiMethod> = z.input<(typeof AGENT_API)[M]['input']>;
export type AgentApiOutput<M extends AgentApiMethod> = z.output<(typeof AGENT_API)[M]['output']>;

/** The API as a window calls it: one async function per method. */
export type AgentApi = { [M in AgentApiMethod]: (input: AgentApiInput<M>) => Promise<AgentApiOutput<M>> };

// A failed call's body and its error: the agent's (its classifier makes them), carried by every transport.
export { AgentApiError, agentApiErrorSchema, type AgentApiErrorBody } from '../agent/index.ts';

/**
 * What every transport answers a call with (the bridge over HTTP, Electron over IPC): the method's value, or the
 * error body. Built by `replyValue` and `replyError`, read by `readReply`: one shape in one place.
 */
export const agentReplySchema = z.discriminatedUnion('ok', [
  z.object({ ok: z.literal(true), value: z.unknown() }),
  z.object({ ok: z.literal(false), error: agentApiErrorSchema }),
]);
export type AgentReply = z.infer<typeof agentReplySchema>;

export function replyValue(value: unknown): AgentReply {
  return { ok: true, value };
}

export function replyError(error: AgentApiErrorBody | AgentApiError): AgentReply {
  return { ok: false, error: error instanceof AgentApiError ? error.toBody() : error };
}

/** A reply as received; anything that is not one (a proxy's page, a cut-off body) is an `internal` error. */
export function readReply(received: unknown, fallback: string): AgentReply {
  const parsed = agentReplySchema.safeParse(received);
  return parsed.success ? parsed.data : replyError({ code: 'internal', message: fallback });
}

/**
 * Events pushed to a window (server-sent events, IPC messages): the status whenever it changes, and each new
 * Recent activity entry as it happens.
 */
export const agentEventSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('status'), status: agentStatusSchema }),
  z.object({ type: z.literal('activity'), entry: activityEntrySchema }),
]);
export type AgentEvent = z.infer<typeof agentEventSchema>;
