import { z } from 'zod';
import { baggageSchema, isoTimeSchema } from './common.ts';
import { memberRefSchema } from './members.ts';
import { servicePathSchema } from './paths.ts';

/*
 * flowsync's own service goes beyond the spec's 20 functions for a team (each is optional for a client, and a
 * service of the spec alone knows none of them: flowsync's answers 404, the spec's platform a 200 "Could not find
 * function"): every version a write replaces is kept, a listing shows what
 * the service holds, and a version can be read and restored.
 */

const count = z.int().nonnegative();
const repoArgs = {
  baggage: baggageSchema,
  repo_owner: z.string().min(1).max(200),
  repo_name: z.string().min(1).max(200),
};

/** What this service can do beyond the spec; a client asks once per service and keeps the answer. */
export const capabilitiesArgsSchema = z.strictObject({ baggage: baggageSchema });
export const capabilitiesValueSchema = z.looseObject({
  /** Writes carry `base_hash` and a stale one is a conflict, not an overwrite. */
  bases: z.boolean(),
  /** Every version a write replaces is kept for `retention_days` (and up to `retention_bytes` per repository). */
  history: z.boolean(),
  retention_days: count,
  retention_bytes: count,
  /** `keep_copy`: a checkout's bytes kept as a version of the file's history, not its current one. */
  conflict_copies: z.boolean().optional(),
  /**
   * Each person has their own token and role: `whoami`, `redeem_invite` and the member functions answer,
   * and every version names the member whose credential wrote it.
   */
  members: z.boolean().optional(),
  /**
   * `repo_config/update` takes `base_hash` and a stale one is a conflict carrying the service's config (absent: an
   * older flowsync service, which does not).
   */
  repo_config_bases: z.boolean().optional(),
  /** `changes`: a long call, answered when a flow of the caller's repositories is written (a live team, live.ts). */
  live_changes: z.boolean().optional(),
});
export type Capabilities = z.infer<typeof capabilitiesValueSchema>;

export const listFlowsArgsSchema = z.strictObject(repoArgs);
export const listFlowsValueSchema = z.looseObject({
  flows: z.array(
    z.looseObject({
      flow_path: servicePathSchema,
      /** The flow's aggregate hash: a client compares a whole repository in one call. */
      hash: z.string(),
      files: count,
      updated_at: isoTimeSchema,
    }),
  ),
});
export type ListFlowsValue = z.infer<typeof listFlowsValueSchema>;

/** At most this many files per page of `list_files`. */
export const LIST_FILES_PAGE_MAX = 5000;

export const listFilesArgsSchema = z.strictObject({
  ...repoArgs,
  flow_path: z.string().optional(),
  with_content: z.boolean().optional(),
  /** The `next` of the page before. */
  after: z.string().optional(),
  first: z.int().min(1).max(LIST_FILES_PAGE_MAX).optional(),
});
export const listedFileSchema = z.looseObject({
  flow_path: servicePathSchema,
  path: servicePathSchema,
  id: z.string(),
  hash: z.string(),
  size: count,
  updated_at: isoTimeSchema,
  written_by: z.string().nullable(),
  /**
   * The member whose credential wrote the current version, decided by the service; `written_by` is the
   * client's own label for its device. Null: written before the service had members; absent: a service without.
   */
  member: memberRefSchema.nullable().optional(),
  content: z.string().optional(),
});
export type ListedFile = z.infer<typeof listedFileSchema>;
export const listFilesValueSchema = z.looseObject({
  files: z.array(listedFileSchema),
  next: z.string().nullable(),
});

/**
 * The files of a repository whose latest version is a deletion (kept as history keeps it), paged like `list_files`:
 * a checkout's first round (a fresh state, `--source`, `--rename`) takes them as deleted on the service, so that a
 * copy it still has is a conflict, never re-created without a word.
 */
export const listDeletedArgsSchema = z.strictObject({
  ...repoArgs,
  /** The `next` of the page before. */
  after: z.string().optional(),
  first: z.int().min(1).max(LIST_FILES_PAGE_MAX).optional(),
});
export const deletedFileSchema = z.looseObject({
  flow_path: servicePathSchema,
  path: servicePathSchema,
  deleted_at: isoTimeSchema,
  deleted_by: z.string().nullable(),
  /** The member whose credential deleted it (see listedFileSchema.member). */
  deleted_by_member: memberRefSchema.nullable().optional(),
});
export type DeletedFile = z.infer<typeof deletedFileSchema>;
export const listDeletedValueSchema = z.looseObject({
  files: z.array(deletedFileSchema),
  next: z.string().nullable(),
});

/** At most this many versions per page of `file_versions` (and the page's size when `first` is not given). */
export const FILE_VERSIONS_PAGE_MAX = 1000;

export const fileVersionsArgsSchema = z.strictObject({
  ...repoArgs,
  flow_path: z.string(),
  path: z.string(),
  /** The `next` of the page before. */
  after: z.string().optional(),
  first: z.int().min(1).max(FILE_VERSIONS_PAGE_MAX).optional(),
});
export const fileVersionSchema = z.looseObject({
  /** The version's number, unique in the service; restore and read it by this. */
  version: z.int().positive(),
  /** null: the file was deleted by this version. */
  hash: z.string().nullable(),
  size: count,
  written_at: isoTimeSchema,
  written_by: z.string().nullable(),
  writer_kind: z.enum(['user', 'admin']).nullable(),
  /** The member whose credential wrote this version (see listedFileSchema.member). */
  member: memberRefSchema.nullable().optional(),
  current: z.boolean(),
  /** A checkout's own bytes kept before it took the service's version (`keep_copy`); never the current one. */
  conflict_copy: z.boolean().optional(),
});
export type FileVersion = z.infer<typeof fileVersionSchema>;
/** A purge of a file's history (`purge_history`): what is left of the versions it removed. */
export const historyPurgeSchema = z.looseObject({
  /** The one version purged; null when every version but the current one was. */
  version: z.int().positive().nullable(),
  /** How many versions it removed. */
  versions: count,
  purged_at: isoTimeSchema,
  /** The purging client's name as it said (`x-flowsync-writer`, e.g. `ops@host:~`); null when it said none. */
  purged_by: z.string().nullable(),
  /** The operator whose credential purged (see listedFileSchema.member). */
  purged_by_member: memberRefSchema.nullable().optional(),
});
export type HistoryPurge = z.infer<typeof historyPurgeSchema>;

export const fileVersionsValueSchema = z.looseObject({
  flow_path: servicePathSchema,
  path: servicePathSchema,
  /** Newest first. */
  versions: z.array(fileVersionSchema),
  /** The file's purges, newest first (absent from a service without `purge_history`). */
  purges: z.array(historyPurgeSchema).optional(),
  /** The cursor of the next (older) page; null or absent on the last (a service that does not page sends all). */
  next: z.string().nullable().optional(),
  /**
   * When the repository's size cap last removed older versions (of any of its files), and the cap: a history that
   * lacks them says so. Null or absent: never (or a service that does not say).
   */
  capped: z.looseObject({ at: isoTimeSchema, cap_bytes: count }).nullable().optional(),
});

/**
 * "older versions of this repository were removed at the 256 MiB cap on 2026-11-26 17:19 UTC": a history that lacks
 * versions says why, in `flowsync history` and the window, never pruned silently.
 */
export function cappedLine(capped: { at: string; capBytes: number }): string {
  const mib = capped.capBytes / 1024 / 1024;
  const cap = Number.isInteger(mib) ? `${mib} MiB` : `${capped.capBytes} bytes`;
  const at = capped.at.replace('T', ' ').replace(/:\d\d(\.\d+)?Z$/, ' UTC');
  return (
    `older versions of this repository were removed at the ${cap} cap on ${at} ` +
    "(each file's last versions are kept first)"
  );
}

export const versionContentArgsSchema = z.strictObject({
  baggage: baggageSchema,
  version: z.int().positive(),
});
export const versionContentValueSchema = z.looseObject({
  version: z.int().positive(),
  flow_path: servicePathSchema,
  path: servicePathSchema,
  hash: z.string().nullable(),
  /** null for a deletion. */
  content: z.string().nullable(),
});

export const restoreVersionArgsSchema = z.strictObject({
  baggage: baggageSchema,
  version: z.int().positive(),
  /** As for every write: the hash the caller last saw of the file (null: it believes there is none). */
  base_hash: z.string().nullable().optional(),
});
export const restoreVersionValueSchema = z.looseObject({
  flow_path: servicePathSchema,
  path: servicePathSchema,
  /** The new current version's number, and its hash (null when the restored version was a deletion). */
  version: z.int().positive(),
  hash: z.string().nullable(),
});

/**
 * An operator removes a file's versions from the history (a secret that reached the service before its
 * `.gitignore` line): every version but the current one, or `version` alone. A tombstone says who purged and when.
 * The current version is never purged: it is the file as the service holds it (delete the file first).
 */
export const purgeHistoryArgsSchema = z.strictObject({
  ...repoArgs,
  flow_path: z.string().min(1).max(1000),
  path: z.string().min(1).max(1000),
  version: z.int().positive().optional(),
});
export const purgeHistoryValueSchema = z.looseObject({
  flow_path: servicePathSchema,
  path: servicePathSchema,
  /** The tombstone the purge left (`versions`: how many it removed; 0 when there was nothing to purge). */
  purge: historyPurgeSchema,
});
export type PurgeHistoryValue = z.infer<typeof purgeHistoryValueSchema>;

/**
 * Keeps a checkout's bytes of a file in the file's history, as a version that is not the current one (the file is
 * not changed): what "take the service's version" would replace on its disk stays findable and restorable.
 */
export const keepCopyArgsSchema = z.strictObject({
  ...repoArgs,
  flow_path: servicePathSchema,
  path: servicePathSchema,
  content: z.string(),
  hash: z.string(),
});
export const keepCopyValueSchema = z.looseObject({
  /** The kept version's number (`flowsync history` lists it, `flowsync restore --version` writes it back). */
  version: z.int().positive(),
});
