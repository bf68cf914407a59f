import { z } from 'zod';
import { baggageSchema, isoTimeSchema } from './common.ts';
import { MAX_FILE_BYTES } from './file-warnings.ts';

/** The words a person reads under the field (zod's own were "Too small: expected string to have >=1 characters"). */
const nonEmpty = z.string().trim().min(1, { message: 'Cannot be empty' });

export const backgroundJobSchema = z.strictObject({
  command: nonEmpty,
  description: z.string(),
  name: nonEmpty,
});
export type BackgroundJob = z.infer<typeof backgroundJobSchema>;

/**
 * The assistant's permission modes the window offers. The spec types `permission_mode` as a string, so the wire
 * accepts any (another server may know other modes); a value outside this list is kept and shown as it is.
 */
export const PERMISSION_MODES = ['ask', 'acceptEdits', 'plan', 'bypassPermissions'] as const;

/**
 * A repository's configuration: the document in `.flowsync/repo-config.json` and the body of function 7.
 * Every field is optional (the spec does not say which are required); owner and name come from the repository.
 * `backend_config` and `service_config` are any JSON value.
 */
export const repoConfigSchema = z.strictObject({
  artifact_config: z.strictObject({ dir: z.string() }).optional(),
  backend_config: z.json().optional(),
  background_jobs: z
    .array(backgroundJobSchema)
    .max(100, { message: 'At most 100 background jobs' })
    .refine((jobs) => new Set(jobs.map((job) => job.name)).size === jobs.length, {
      message: 'Background job names must be unique',
    })
    .optional(),
  assistant_config: z.strictObject({ model: z.string(), permission_mode: z.string() }).optional(),
  copy_ignored_files: z.array(nonEmpty).max(1000, { message: 'At most 1,000 files to copy' }).optional(),
  editor: z.string().optional(),
  service_config: z.json().optional(),
  user: z.string().optional(),
});
export type RepoConfig = z.infer<typeof repoConfigSchema>;

/** A repository's name as the service keys repositories: a GitHub-like slug part, no `/`. */
export const repoSlugPartSchema = z
  .string()
  .min(1)
  .max(200)
  .regex(/^[^/\s\\]+$/, 'Must not contain /, \\ or white space');

/**
 * A repository's owner: slug parts joined by `/`, since a GitLab subgroup is part of the owner
 * (`git@gitlab.com:group/sub/app.git` is owner `group/sub`, name `app`); the name has no `/`, so owner and
 * name still say one repository. No empty part, `.` or `..`: an owner is never a path that climbs.
 */
export const repoOwnerSchema = z
  .string()
  .min(1)
  .max(200)
  .regex(
    /^(?!\.{1,2}(?:\/|$))[^/\s\\]+(?:\/(?!\.{1,2}(?:\/|$))[^/\s\\]+)*$/,
    'Must be names joined by / (no empty part, no . or ..), without \\ or white space',
  );

export const repoConfigUpdateArgsSchema = z.strictObject({
  baggage: baggageSchema,
  owner: repoOwnerSchema,
  name: repoSlugPartSchema,
  ...repoConfigSchema.shape,
  /**
   * Extension (capabilities `repo_config_bases`): the hash (repoConfigHashInput) of the config this checkout last
   * synced, null for "I believe there is none". The service writes only on that base, or when it already holds the
   * same config; anything else is refused as a conflict that carries the service's config (repoConfigConflictOf).
   */
  base_hash: z
    .string()
    .regex(/^[0-9a-f]{64}$/, 'a hex SHA-256')
    .nullable()
    .optional(),
});

/**
 * Why a repository config (or a service's record of one) is not taken, or null: its file (two-space JSON, as the agent writes it)
 * would be over the size a flow file may be, which is all the agent reads of that file. A hostile service's 40 MB
 * config in a conflict was stored in the state, sent to the window and written into the checkout.
 */
export function repoConfigOverCap(config: unknown): string | null {
  // The config's own fields, as its file holds them (a record's owner, name and the service's extras are not).
  const fields =
    typeof config === 'object' && config !== null && !Array.isArray(config)
      ? Object.fromEntries(Object.entries(config).filter(([key]) => key in repoConfigSchema.shape))
      : config;
  const text = JSON.stringify(fields, null, 2) ?? '';
  // A character is 1 to 3 bytes of UTF-8 (a surrogate pair 4 for 2): measured only when the length leaves it open.
  if (text.length * 3 <= MAX_FILE_BYTES) return null;
  const bytes = text.length > MAX_FILE_BYTES ? text.length : new TextEncoder().encode(text).length;
  if (bytes <= MAX_FILE_BYTES) return null;
  return `is ${Math.ceil(bytes / 1024).toLocaleString('en')} KiB as a file, over the ${MAX_FILE_BYTES / 1024 / 1024} MiB a file may be`;
}

/** The cap as a schema's check (repoConfigOverCap), on every config a service answers. */
const withinCap = (record: Record<string, unknown>, context: z.core.$RefinementCtx) => {
  const over = repoConfigOverCap(record);
  if (over !== null) context.addIssue({ code: 'custom', message: `The repository config ${over}` });
};

const repoConfigRecordShape = {
  ...repoConfigSchema.shape,
  owner: z.string(),
  name: z.string(),
  updated_at: isoTimeSchema,
  /** flowsync's service's extras: the config's hash (what a later write names as its base) and who wrote it. */
  hash: z.string().optional(),
  written_by: z.string().nullable().optional(),
};
export const repoConfigRecordSchema = z.looseObject(repoConfigRecordShape).superRefine(withinCap);
export type RepoConfigRecord = z.infer<typeof repoConfigRecordSchema>;

/** The service's config that a write on a stale base was refused for: what it holds, who wrote it and when. */
export const repoConfigCurrentSchema = z
  .looseObject({
    ...repoConfigRecordShape,
    hash: z.string().regex(/^[0-9a-f]{64}$/),
    written_by: z.string().nullable(),
  })
  .superRefine(withinCap);
export type RepoConfigCurrent = z.infer<typeof repoConfigCurrentSchema>;

/** The config fields of a record (owner, name and the service's extras left out), checked by the schema. */
export function configOfRecord(record: Record<string, unknown>): RepoConfig {
  const fields = Object.entries(record).filter(([key]) => key in repoConfigSchema.shape);
  return repoConfigSchema.parse(Object.fromEntries(fields));
}

/**
 * What a repository config's hash is the SHA-256 of: its JSON with every object's keys in code-unit order, so that
 * the same config has the same hash however its file or a request ordered them. The one definition, for the service
 * that compares bases and the agent that keeps them (the hashing stays with each: this layer runs in the window).
 */
export function repoConfigHashInput(config: RepoConfig): string {
  return canonicalJson(config);
}

function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const object = value as Record<string, unknown>;
    const keys = Object.keys(object)
      .filter((key) => object[key] !== undefined)
      .sort();
    return `{${keys.map((key) => `${JSON.stringify(key)}:${canonicalJson(object[key])}`).join(',')}}`;
  }
  return JSON.stringify(value);
}
