import { z } from 'zod';
import { baggageSchema, isoTimeSchema } from './common.ts';
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
});
export type Capabilities = z.infer<typeof capabilitiesValueSchema>;

/**
 * What a service of the spec alone lacks, said once in `start`, `status`, `doctor` and the window (issue 37): it
 * answers none of the extensions, so the agent sends only the spec's 20 functions and fields.
 */
export function specAloneLine(service: string): string {
  return (
    `${service} keeps no history and cannot detect overwrites (a service of the spec alone): no versions to ` +
    "restore; no conflict check, the last writer wins (a teammate's edit of the same file can be replaced without " +
    'a word); deletions are sent as full listings of a flow. flowsync serve keeps every version and refuses lost updates.'
  );
}

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
  content: z.string().optional(),
});
export type ListedFile = z.infer<typeof listedFileSchema>;
export const listFilesValueSchema = z.looseObject({
  files: z.array(listedFileSchema),
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
  current: z.boolean(),
});
export type FileVersion = z.infer<typeof fileVersionSchema>;
export const fileVersionsValueSchema = z.looseObject({
  flow_path: servicePathSchema,
  path: servicePathSchema,
  /** Newest first. */
  versions: z.array(fileVersionSchema),
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
 * versions says why, in `flowsync history` and the window (issue 41: pruned silently before).
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
