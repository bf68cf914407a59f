import { Command } from 'commander';
import { hereSide, plural, printable, printableJson, type HereSide } from '../../protocol/index.ts';
import type { ConflictView } from '../../window/index.ts';
import { withAgentApi } from '../agent-api.ts';
import { EXIT } from '../exit-codes.ts';
import { urlOption } from '../service-url.ts';
import { lostMessage } from '../../sync/index.ts';

export function conflictsCommand(): Command {
  return new Command('conflicts')
    .description(
      'Lists the files the service refused because its version changed since this checkout last synced them\n' +
        '(a teammate, another checkout, a restored backup): who changed it and when. Nothing of them is sent\n' +
        'until you settle each with `flowsync resolve`. Also says when deletions are held. Exits 4 when there\n' +
        'is something to settle, 0 when not. Asks the running agent, else opens the state itself.',
    )
    .argument('[folders...]', 'repository folders (default: the current one)')
    .addOption(urlOption())
    .option('--json', 'print as JSON')
    .addHelpText('after', '\nExamples:\n  $ flowsync conflicts\n  $ flowsync conflicts ~/code/app --json')
    .action(async (folders: string[], options: { url?: string; json?: boolean }) => {
      const out = (line: string) => process.stdout.write(`${printable(line)}\n`);
      const shown = await withAgentApi(folders.length > 0 ? folders : ['.'], options, async (call, roots) =>
        Promise.all(roots.map((root) => call('conflicts', { root }))),
      );
      if (options.json) process.stdout.write(`${printableJson(shown)}\n`);
      else for (const repository of shown) for (const line of describe(repository)) out(line);
      const waiting = shown.some((r) => r.conflicts.length > 0 || r.heldDeletions > 0);
      process.exitCode = waiting ? EXIT.attention : EXIT.ok;
    });
}

function describe(repository: {
  root: string;
  conflicts: ConflictView[];
  heldDeletions: number;
  newer: ConflictView[];
}): string[] {
  const { root, conflicts, heldDeletions, newer } = repository;
  const lines: string[] = [];
  // Newer on the service, untouched here: no conflict (nothing here is at stake), said with its one action.
  const behind =
    newer.length === 0
      ? []
      : [
          `${root}: ${plural(newer.length, 'file')} newer on the service, unchanged here (not a conflict): ` +
            `\`flowsync resolve --newer ${root}\` takes them`,
          ...newer.map((file) => `  ${file.flowPath}/${file.path}: ${conflictLine(file).split(';')[0]}`),
        ];
  if (conflicts.length === 0 && heldDeletions === 0)
    return [`${root}: no conflicts, no deletions held`, ...behind];
  if (conflicts.length > 0) {
    lines.push(`${root}: ${plural(conflicts.length, 'file')} in conflict`);
    for (const conflict of conflicts)
      lines.push(`  ${conflict.flowPath}/${conflict.path}: ${conflictLine(conflict)}`);
    // A version the service lost has one safe way out (the hint never names --theirs for it).
    if (conflicts.some((conflict) => conflict.lost !== true))
      lines.push(
        "  Settle them: flowsync resolve <path…> --mine (send yours on top of the service's) or --theirs (take the service's)",
      );
    else lines.push("  Settle them: flowsync resolve <path…> --mine (sends this checkout's copies again)");
  }
  if (heldDeletions > 0)
    lines.push(
      `${root}: ${plural(heldDeletions, 'deletion')} held: \`flowsync sync --yes ${root}\` deletes them on the service, ` +
        `\`flowsync resolve --held --theirs ${root}\` puts them back on disk`,
    );
  return [...lines, ...behind];
}

const YOURS: Record<HereSide, string> = {
  deleted: 'you deleted it',
  'never synced': 'another version here (this checkout never synced it)',
  unchanged: 'unchanged here (this checkout is behind: --theirs takes it)',
  changed: 'you changed it',
};

/** "changed on the service by bob@laptop:~/app at 2026-11-25 11:02:07 UTC; yours: changed" */
export function conflictLine(conflict: ConflictView): string {
  // Never "--theirs takes it" for a version the service lost: that would delete or age the only copy.
  if (conflict.lost === true) return lostMessage(conflict);
  const theirs = conflict.serviceHash === null ? 'deleted on the service' : 'changed on the service';
  const by = conflict.writtenBy ? ` by ${conflict.writtenBy}` : '';
  const at = conflict.writtenAt
    ? ` at ${conflict.writtenAt.replace('T', ' ').replace(/\.\d+Z$|Z$/, ' UTC')}`
    : '';
  // Of the disk now, never of what was sent: an edit made while a teammate's version waited was called
  // "unchanged here (--theirs takes it)". No base: never synced from this checkout (a worktree or a clone made the
  // source), so another version, not an edit of the user's.
  return `${theirs}${by}${at}; ${YOURS[hereSide({ disk: conflict.diskHash, base: conflict.baseHash })]}`;
}
