import type { Capabilities } from './history.ts';

// The lines that say what a service cannot protect: a module of their own, without schemas, since `flowsync
// status` says them and history.ts's schemas (240 zod objects) cost it more than its own work.

/**
 * What a service of the spec alone lacks, said once in `start`, `status`, `doctor` and the window: it
 * answers none of the extensions, so the agent sends only the spec's 20 functions and fields.
 */
export function specAloneLine(service: string): string {
  return (
    `${service} keeps no history and cannot detect overwrites (a service of the spec alone): no versions to ` +
    "restore; no conflict check, the last writer wins (a teammate's edit of the same file, or of the repository's " +
    'config, can be replaced without a word); deletions are sent as full listings of a flow. flowsync serve keeps every version and refuses lost updates.'
  );
}

/**
 * The one line that says what a service cannot protect, from its capabilities (null: it has not answered yet, or
 * it protects everything): a service of the spec alone (specAloneLine), or a flowsync service older than the
 * repository config's bases, whose last writer's config wins.
 */
export function serviceLimitsLine(service: string, capabilities: Capabilities | null): string | null {
  if (!capabilities) return null;
  if (!capabilities.bases) return specAloneLine(service);
  if (capabilities.repo_config_bases !== true)
    return (
      `${service} cannot detect overwrites of a repository's config (an older flowsync service): the last ` +
      "writer's .flowsync/repo-config.json wins there. Flow files are protected."
    );
  return null;
}
