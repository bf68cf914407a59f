import { z } from 'zod';
import { memberRefSchema } from './members.ts';
import { baggageSchema, isoTimeSchema } from './common.ts';
import { servicePathSchema } from './paths.ts';

/** One file of a flow: `path` relative to the flow folder, `hash` the hex SHA-256 of the UTF-8 bytes. */
/**
 * The hash a writer last saw of a file (extension, optional): the service writes only when its current hash is
 * this one, or the content is already equal; null means "I believe this path is new".
 */
export const baseHashSchema = z
  .string()
  .regex(/^[0-9a-f]{64}$/, 'a hex SHA-256')
  .nullable();

export const fileEntrySchema = z.strictObject({
  content: z.string(),
  hash: z.string(),
  path: z.string(),
  base_hash: baseHashSchema.optional(),
});
export type FileEntry = z.infer<typeof fileEntrySchema>;

/** One flow: `flow_path` is the flow folder relative to the repository root. */
export const flowEntrySchema = z.strictObject({
  flow_path: z.string(),
  files: z.array(fileEntrySchema),
  /** Files to delete, each with the hash its writer last saw (extension): never "whatever I did not list". */
  deletes: z.array(z.strictObject({ path: z.string(), base_hash: z.string() })).optional(),
});

/**
 * A file the service did not write because its base was not the service's version (extension): the flow it
 * belongs to is left as it was, whole. `service_hash` null: the service has no such file (deleted, or never).
 */
export const conflictSchema = z.looseObject({
  flow_path: servicePathSchema,
  path: servicePathSchema,
  base_hash: z.string().nullable(),
  service_hash: z.string().nullable(),
  /** What was sent: the new content's hash, or null for a deletion. */
  sent_hash: z.string().nullable(),
  /** Who wrote the service's version (the writing client's name), and when; null when not known. */
  written_by: z.string().nullable(),
  written_at: z.string().nullable(),
  /** The member whose credential wrote the service's version; absent from a service without members. */
  member: memberRefSchema.nullable().optional(),
});
export type Conflict = z.infer<typeof conflictSchema>;
export type FlowEntry = z.infer<typeof flowEntrySchema>;

const count = z.int().nonnegative();

/** What the service created or updated, so the agent learns file ids for later `update_file` calls. */
export const syncedFileSchema = z.looseObject({
  flow_path: servicePathSchema,
  path: servicePathSchema,
  id: z.string(),
  hash: z.string(),
});
export type SyncedFile = z.infer<typeof syncedFileSchema>;

export const syncBatchArgsSchema = z.strictObject({
  baggage: baggageSchema,
  flows: z.array(flowEntrySchema),
  repo_name: z.string().min(1).max(200),
  repo_owner: z.string().min(1).max(200),
  delete_missing: z.boolean().optional(),
});
/** Exact counts (spec); `repo_id` and `files` are this service's extras, optional for other servers. */
export const syncBatchValueSchema = z.looseObject({
  files_created: count,
  files_deleted: count,
  files_updated: count,
  flows_synced: count,
  skipped: z.boolean(),
  repo_id: z.string().optional(),
  files: z.array(syncedFileSchema).optional(),
  /** Files not written for a stale base (extension); their flows are unchanged. */
  conflicts: z.array(conflictSchema).optional(),
});
export type SyncBatchValue = z.infer<typeof syncBatchValueSchema>;

export const syncInternalArgsSchema = z.strictObject({
  baggage: baggageSchema,
  files: z.array(fileEntrySchema),
  flow_path: z.string(),
  repo_id: z.string().min(1),
  delete_missing: z.boolean().optional(),
  skip_hash_update: z.boolean().optional(),
});
export const syncInternalValueSchema = z.looseObject({
  files_created: count,
  files_deleted: count,
  files_updated: count,
  flow_def_id: z.string(),
  files: z.array(syncedFileSchema).optional(),
  conflicts: z.array(conflictSchema).optional(),
});
export type SyncInternalValue = z.infer<typeof syncInternalValueSchema>;

export const updateFileArgsSchema = z.strictObject({
  baggage: baggageSchema,
  content: z.string(),
  fileId: z.string().min(1),
  /** Extension: written only when the file's current hash is this one (or the content is already equal). */
  base_hash: z.string().optional(),
});
/** The stored file after the update, and its flow's new aggregate hash. */
export const flowFileRecordSchema = z.looseObject({
  id: z.string(),
  flow_def_id: z.string(),
  flow_path: z.string(),
  path: z.string(),
  hash: z.string(),
  size: count,
  updated_at: isoTimeSchema,
  flow_hash: z.string(),
});
export type FlowFileRecord = z.infer<typeof flowFileRecordSchema>;
