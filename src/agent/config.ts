import { readFileSync, renameSync } from 'node:fs';
import { dirname } from 'node:path';
import { z } from 'zod';
import { ensurePrivateFile, ensurePrivateFolder, replaceFile } from '../host/index.ts';
import { asideName, flowRootProblem } from '../sync/index.ts';
import { describeIssues, toWireIssues } from '../protocol/index.ts';
import { ConfigError } from './config-error.ts';
import { tooWide } from './folder-check.ts';
import { notice } from './notice.ts';
import { configFilePath } from '../host/index.ts';

/** The address `flowsync serve` listens on by default, and so the one the CLI talks to by default. */
export const DEFAULT_SERVICE_PORT = 7420;
export const DEFAULT_SERVICE_URL = `http://127.0.0.1:${DEFAULT_SERVICE_PORT}`;

/**
 * The agent's settings file. Secrets never go in it: tokens and API keys live in the OS keychain.
 * Unknown fields are kept, so that an older flowsync does not erase a newer one's settings.
 */
/** A repository the agent keeps in sync. owner/name are read from the git remote when not set. */
export const repositoryConfigSchema = z.looseObject({
  path: z.string().min(1),
  owner: z.string().min(1).max(200).optional(),
  name: z.string().min(1).max(200).optional(),
  /** Folders of flows, relative to the repository (`flows`, `apps/flows`): never absolute, never with `..`. */
  flowRoots: z
    .array(
      z.string().superRefine((root, context) => {
        const problem = flowRootProblem(root);
        if (problem !== null) context.addIssue({ code: 'custom', message: problem });
      }),
    )
    .min(1)
    .default(['flows']),
  enabled: z.boolean().default(true),
  /** When its user paused it (`enabled: false`), ISO time; said by `status`, the window and the terminal. */
  pausedAt: z.string().max(64).optional(),
  /**
   * When a round's deletions wait for their user: more than `files` files, or more than `share` (0–1) of the
   * repository's synced files; false: never held. Default 100 files or a quarter (the engine's DEFAULT_DELETION_GUARD).
   */
  holdDeletions: z
    .union([
      z.literal(false),
      z.strictObject({ files: z.int().nonnegative(), share: z.number().min(0).max(1) }),
    ])
    .optional(),
  /**
   * What git's changes (a branch switch, `checkout --`, a reset, a stash, a rebase, a merge) do when others write to
   * the repository on the service: `ask` (default) holds them as one change set until its user sends or
   * keeps it; `send` sends them as a person's edits. Alone on a service, they are sent either way.
   */
  gitChanges: z.enum(['ask', 'send']).optional(),
});
export type RepositoryConfig = z.infer<typeof repositoryConfigSchema>;

export const agentConfigSchema = z.looseObject({
  /** The service to sync with; empty means the embedded service. */
  serviceUrl: z.string().default(''),
  repositories: z.array(repositoryConfigSchema).default([]),
});
export type AgentConfig = z.infer<typeof agentConfigSchema>;

export { ConfigError };

/**
 * The config file, or the defaults when there is none. A file that is not JSON at all (truncated, overwritten,
 * empty) cannot be fixed by naming a field: it is kept aside as `config.json.bad-<time>`, said in one line, and
 * the defaults are used, so the agent keeps running. A file that is JSON but has a wrong field is someone's
 * edit: moving it aside would silently drop every repository and switch to the embedded service, so that one
 * is refused with the field named, and left where it is.
 */
export function loadConfig(path = configFilePath()): AgentConfig {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return agentConfigSchema.parse({});
    throw new ConfigError(`Cannot read ${path} (${code}): check that it is a file you may read.`);
  }
  // An older flowsync, or a hand-made file, may have left it readable by others.
  ensurePrivateFolder(dirname(path));
  ensurePrivateFile(path);
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    const aside = asideName(path, 'bad');
    try {
      renameSync(path, aside);
    } catch (error) {
      // Another flowsync command moved it a moment ago.
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return loadConfig(path);
      throw error;
    }
    notice(
      `${path} was not valid JSON: kept it as ${aside} and continued with the default settings ` +
        '(fix it and move it back, or add your folders again).',
    );
    return agentConfigSchema.parse({});
  }
  const parsed = agentConfigSchema.safeParse(json);
  if (!parsed.success) {
    throw new ConfigError(
      `${path} is not a valid flowsync config (${issuesOf(parsed.error)}): fix or delete it.`,
    );
  }
  // The one folder check's rule, for a folder added before it (an older flowsync's window took `/`): the whole
  // disk or home would be scanned at every start. Left out with the entry named: refusing the file stopped the agent,
  // the window and every command, so the window's Remove that the line led to could not be reached.
  const repositories = parsed.data.repositories.filter((repository, index) => {
    const wide = tooWide(repository.path);
    if (wide !== null)
      notice(
        `${path}: repositories.${index}.path: ${wide}; it is left out (not synced), and dropped from the file at the next change of settings.`,
      );
    return wide === null;
  });
  return { ...parsed.data, repositories };
}

/**
 * What the config file holds, read without changing anything (no mode tightened, nothing moved aside), for
 * `flowsync doctor`: the settings, or the one line that says what is wrong with the file (the defaults then).
 */
export function inspectConfig(path = configFilePath()): { config: AgentConfig; problem: string | null } {
  const defaults = agentConfigSchema.parse({});
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return { config: defaults, problem: null };
    return { config: defaults, problem: `${path} cannot be read (${code})` };
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return {
      config: defaults,
      problem: `${path} is not valid JSON: the agent sets it aside and starts with no repositories`,
    };
  }
  const parsed = agentConfigSchema.safeParse(json);
  if (parsed.success) return { config: parsed.data, problem: null };
  return {
    config: defaults,
    problem: `${path} is not a valid flowsync config (${issuesOf(parsed.error)}): the agent refuses to start`,
  };
}

/** The fields a config file gets wrong: `repositories.0.path: …; serviceUrl: …`. */
function issuesOf(error: z.ZodError): string {
  return describeIssues(toWireIssues(error.issues), '');
}

/** Writes the whole file atomically: a crash leaves the old file or the new one, never half of one. */
export function saveConfig(config: AgentConfig, path = configFilePath()): void {
  const valid = agentConfigSchema.parse(config);
  ensurePrivateFolder(dirname(path));
  replaceFile(path, `${JSON.stringify(valid, null, 2)}\n`, 0o600);
}
