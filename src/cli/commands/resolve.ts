import { Command, Option } from 'commander';
import { read } from 'read';
import { TAKEN_WORDS, incomingCounts, plural, printable, type IncomingChange } from '../../protocol/index.ts';
import { repositoryPathOf } from '../repository-path.ts';
import { withAgentApi } from '../agent-api.ts';
import { EXIT } from '../exit-codes.ts';
import { urlOption } from '../service-url.ts';
import { UsageError } from '../usage-error.ts';

export function resolveCommand(): Command {
  return new Command('resolve')
    .description(
      'Settles files in conflict (`flowsync conflicts` lists them). --mine sends the file as it is on disk\n' +
        "on top of the service's version (which stays in the service's history); --theirs writes the\n" +
        "service's version to disk (or removes the file, when the service deleted it), after keeping yours:\n" +
        "in the service's history as your conflict copy (`flowsync history` lists it), or, on a service of the\n" +
        'spec alone, beside the file as name.conflict-<time>.ext (never synced). A path may be a file,\n' +
        'a flow folder or the repository: every conflict below it is settled. With --held, the deletions held\n' +
        'for being many: --mine deletes them on the service (as `flowsync sync --yes`), --theirs puts the\n' +
        "service's copies back on disk. With --not-in-checkout, the files on the service that this checkout\n" +
        'never had (a fresh clone, CI, a rebuilt state): alone it lists them (exit 4 when there are any),\n' +
        '--mine lists them and deletes them on the service once you confirm (or with --yes), --theirs writes\n' +
        "the service's copies to disk (never over a file that is there). With --newer, the files newer on the\n" +
        "service and untouched here (behind, not in conflict: a teammate's edits): the service's copies are\n" +
        'written to disk, and nothing changed here is; when that deletes or overwrites more files here than\n' +
        'the deletion guard lets through, it lists them and asks (--yes takes them; without a terminal, none).',
    )
    .argument(
      '[paths...]',
      'files or folders in conflict (with --held or --not-in-checkout: repository folders; default: the current one)',
    )
    .option('--held', 'settle the deletions held in these repositories instead of conflicts')
    .addOption(
      new Option(
        '--not-in-checkout',
        'list (or with --mine/--theirs settle) the files on the service that are not in this checkout',
      ).conflicts('held'),
    )
    .addOption(
      new Option(
        '--newer',
        "take the files newer on the service, untouched here (a teammate's edits: nothing here is lost)",
      ).conflicts(['held', 'notInCheckout', 'mine', 'theirs']),
    )
    .addOption(new Option('--mine', "keep this checkout's version").conflicts('theirs'))
    .addOption(new Option('--theirs', "take the service's version").conflicts('mine'))
    .option(
      '--yes',
      'with --not-in-checkout --mine: delete the files listed without asking; with --newer: take them without asking\n' +
        '(by default each lists them and asks on a terminal when they are many)',
    )
    .addOption(urlOption())
    .addHelpText(
      'after',
      '\nExamples:\n  $ flowsync resolve flows/ci/build.yml --theirs\n  $ flowsync resolve flows/ci --mine\n  $ flowsync resolve . --theirs\n  $ flowsync resolve --held --theirs\n' +
        '  $ flowsync resolve --not-in-checkout\n  $ flowsync resolve --not-in-checkout --theirs\n' +
        '  $ flowsync resolve --newer',
    )
    .action(async (given: string[], options: ResolveOptions) => {
      const out = (line: string) => process.stdout.write(`${printable(line)}\n`);
      if (options.notInCheckout) return notInCheckout(given.length > 0 ? given : ['.'], options, out);
      if (options.newer) return takeNewer(given.length > 0 ? given : ['.'], options, out);
      if (!options.mine && !options.theirs)
        throw new UsageError(
          "Say which version to keep: --mine (this checkout's) or --theirs (the service's).",
        );
      const side = options.mine ? 'mine' : 'theirs';
      if (given.length === 0 && !options.held)
        throw new UsageError(
          'Name the files or folders to settle (`flowsync conflicts` lists them), or . for all of this repository.',
        );
      const paths = given.length > 0 ? given : ['.'];
      if (options.held) return settleHeld(paths, side, options, out);
      const targets = paths.map(repositoryPathOf);
      const folders = [...new Set(targets.map((target) => target.folder))];
      let unwritten = 0;
      const settled = await withAgentApi(folders, options, async (call, roots, running) => {
        let count = 0;
        for (const [index, root] of roots.entries()) {
          const inside = targets.filter((target) => target.folder === folders[index]).map((t) => t.inside);
          const { conflicts } = await call('conflicts', { root });
          const named = conflicts.filter((conflict) =>
            inside.some((target) => covers(target, `${conflict.flowPath}/${conflict.path}`)),
          );
          if (named.length === 0) continue;
          const { resolved, notWritten, kept } = await call('resolveConflicts', {
            root,
            side,
            files: named.map(({ flowPath, path }) => ({ flowPath, path })),
          });
          const keptAt = new Map(kept.map((file) => [`${file.flowPath}/${file.path}`, file.where]));
          for (const file of resolved) {
            const where = keptAt.get(`${file.flowPath}/${file.path}`);
            out(
              `${file.flowPath}/${file.path}: ${settledWords(side, running)}` +
                (where ? `; yours is ${where}` : ''),
            );
          }
          sayNotWritten(notWritten);
          unwritten += notWritten.length;
          count += resolved.length + notWritten.length;
        }
        return count;
      });
      if (settled === 0) {
        process.stderr.write(
          `${printable(`No conflict at ${paths.join(', ')}: \`flowsync conflicts\` lists them.`)}\n`,
        );
        process.exitCode = EXIT.usage;
      } else if (unwritten > 0) {
        process.exitCode = EXIT.attention;
      }
    });
}

/**
 * What became of a file settled: --mine is queued in the state's outbox, sent by the running agent at once, or
 * by the next agent (`start`, `sync`) when none runs: "sent" was said then of a file still only queued.
 */
function settledWords(side: 'mine' | 'theirs', running: boolean): string {
  if (side === 'theirs') return "the service's version is on disk";
  return running
    ? "yours is being sent on top of the service's by the running agent"
    : "yours is queued, to be sent on top of the service's when the agent runs (`flowsync start`, or `flowsync sync` once)";
}

/**
 * The files whose service copy could not be written, a line each on stderr with why: they stay waiting (exit 4),
 * and the others were settled.
 */
function sayNotWritten(files: readonly { flowPath: string; path: string; reason: string }[]): void {
  for (const file of files)
    process.stderr.write(`${printable(`${file.flowPath}/${file.path}: not written: ${file.reason}`)}\n`);
}

interface ResolveOptions {
  yes?: boolean;
  mine?: boolean;
  theirs?: boolean;
  held?: boolean;
  notInCheckout?: boolean;
  newer?: boolean;
  url?: string;
}

/**
 * "Take them": the files newer on the service, untouched here, written to disk from the service's copy. A file
 * changed here meanwhile is not written (a conflict now): said on stderr, exit 4. A take that deletes or overwrites
 * more files here than the repository's deletion guard lets through asks first: it lists them, and takes
 * them on a yes at a terminal, or with --yes; with neither (a script, CI) it takes none of them (exit 4).
 */
async function takeNewer(
  folders: string[],
  options: ResolveOptions,
  out: (line: string) => void,
): Promise<void> {
  const { taken, unwritten, left } = await withAgentApi(folders, options, async (call, roots) => {
    let taken = 0;
    let unwritten = 0;
    let left = 0;
    for (const root of roots) {
      let result = await call('takeNewer', { root, confirmed: options.yes === true });
      if (result.asked.length > 0) {
        const { asked } = result;
        out(
          `${root}: ${plural(asked.length, 'file')} newer on the service would be taken: ${incomingCounts(asked)}: ` +
            'more than this repository takes without asking',
        );
        for (const file of asked)
          out(`  ${CHANGE_MARK[file.change]} ${file.flowPath}/${file.path} (${byWhom(file)})`);
        if (!(await confirmed(`Take these ${plural(asked.length, 'file')} from the service? [y/N] `))) {
          out(`${root}: nothing taken: \`flowsync resolve --newer --yes ${root}\` takes them`);
          left += asked.length;
          continue;
        }
        // Only what was listed, on the versions listed: a file that came or changed there since is not taken unseen.
        const files = asked.map(({ flowPath, path, serviceHash }) => ({ flowPath, path, serviceHash }));
        result = await call('takeNewer', { root, confirmed: true, files });
      }
      for (const file of result.taken) out(`${file.flowPath}/${file.path}: ${TAKEN_WORDS[file.change]}`);
      if (result.taken.length > 1)
        out(
          `${root}: ${plural(result.taken.length, 'file')} taken from the service: ${incomingCounts(result.taken)}`,
        );
      sayNotWritten(result.notWritten);
      taken += result.taken.length;
      unwritten += result.notWritten.length;
    }
    return { taken, unwritten, left };
  });
  if (taken === 0 && unwritten === 0 && left === 0) out('Nothing is newer on the service.');
  process.exitCode = unwritten > 0 || left > 0 ? EXIT.attention : EXIT.ok;
}

/** How each file of a take is marked in its list: as a diff marks lines (- gone, ~ changed, + new). */
const CHANGE_MARK: Record<IncomingChange, string> = { deleted: '-', replaced: '~', written: '+' };

/** "deleted on the service by bob@desk:~/app at 2026-11-26T17:01:02Z" */
function byWhom(file: {
  change: IncomingChange;
  writtenBy: string | null;
  writtenAt: string | null;
}): string {
  const what = file.change === 'deleted' ? 'deleted' : 'changed';
  return `${what} on the service${file.writtenBy ? ` by ${file.writtenBy}` : ''}${file.writtenAt ? ` at ${file.writtenAt}` : ''}`;
}

/**
 * Files on the service that the checkout never had: listed (exit 4 when there are any, so a script sees them),
 * deleted on the service (mine: the checkout as it is), or written to disk from the service's copy (theirs).
 */
async function notInCheckout(
  folders: string[],
  options: ResolveOptions,
  out: (line: string) => void,
): Promise<void> {
  const waiting = await withAgentApi(folders, options, async (call, roots) => {
    let left = 0;
    for (const root of roots) {
      // Listed first, and only what was listed is settled, on the versions listed: a file that came or changed
      // on the service meanwhile is not deleted unseen.
      const { files } = await call('notInCheckout', { root });
      const named = files.map(({ flowPath, path, hash }) => ({ flowPath, path, hash }));
      if (files.length === 0) {
        out(`${root}: every file on the service is in this checkout`);
      } else if (options.mine) {
        // Listed, then asked: nothing is deleted on the service that its user has not seen named.
        out(
          `${root}: ${plural(files.length, 'file')} on the service ${files.length === 1 ? 'is' : 'are'} not in this checkout`,
        );
        for (const file of files) out(`  ${file.flowPath}/${file.path}${describeWriter(file)}`);
        if (!(
          options.yes ||
          (await confirmed(
            `Delete ${files.length === 1 ? 'it' : `these ${files.length} files`} on the service? [y/N] `,
          ))
        )) {
          out(
            `${root}: nothing deleted: \`flowsync resolve --not-in-checkout --mine --yes ${root}\` deletes ${files.length === 1 ? 'it' : `these ${files.length}`} on the service`,
          );
          left += files.length;
          continue;
        }
        const { deleted } = await call('settleNotInCheckout', {
          root,
          choice: 'delete',
          files: named,
          confirmed: true,
        });
        out(`${root}: ${plural(deleted, 'file')} not in this checkout deleted on the service`);
        for (const file of files) out(`  - ${file.flowPath}/${file.path}`);
        if (deleted < files.length)
          out(
            `  ${files.length - deleted} not deleted (changed on the service since, or it did not answer): \`flowsync conflicts\` and \`flowsync status\` say which`,
          );
      } else if (options.theirs) {
        const { restored, skipped } = await call('settleNotInCheckout', {
          root,
          choice: 'restore',
          files: named,
        });
        out(`${root}: ${plural(restored, 'file')} written to disk from the service's copy`);
        const notWritten = new Set(skipped.map((file) => `${file.flowPath}/${file.path}`));
        for (const file of files)
          if (!notWritten.has(`${file.flowPath}/${file.path}`)) out(`  + ${file.flowPath}/${file.path}`);
        for (const file of skipped) out(`  ${file.flowPath}/${file.path}: not written: ${file.reason}`);
      } else {
        left += files.length;
        out(
          `${root}: ${plural(files.length, 'file')} on the service ${files.length === 1 ? 'is' : 'are'} not in this checkout`,
        );
        for (const file of files) out(`  ${file.flowPath}/${file.path}${describeWriter(file)}`);
        out(
          "  `flowsync resolve --not-in-checkout --mine` deletes them on the service, `--theirs` writes the service's copies to disk",
        );
      }
    }
    return left;
  });
  if (waiting > 0) process.exitCode = EXIT.attention;
}

/** ": written by bob@desk:~/app (checkout 3f9a2c41b0d6) at 2026-11-26T17:01:02Z" */
function describeWriter(file: { writtenBy: string | null; writtenAt: string }): string {
  return `: written${file.writtenBy ? ` by ${file.writtenBy}` : ''} at ${file.writtenAt}`;
}

/** Its user's yes at a terminal; no terminal (a script, CI) is no yes: `--yes` says it there. */
async function confirmed(question: string): Promise<boolean> {
  if (!process.stdin.isTTY) return false;
  const answer = await read({ prompt: question, output: process.stderr });
  return /^y(es)?$/i.test(answer.trim());
}

/** Held deletions: deleted on the service (mine: the disk as it is) or put back on disk (theirs). */
async function settleHeld(
  folders: string[],
  side: 'mine' | 'theirs',
  options: { url?: string },
  out: (line: string) => void,
): Promise<void> {
  const unwritten = await withAgentApi(folders, options, async (call, roots) => {
    let count = 0;
    for (const root of roots) {
      const { deleted, restored, notWritten, kept } = await call('settleDeletions', {
        root,
        choice: side === 'mine' ? 'delete' : 'restore',
      });
      out(
        side === 'mine'
          ? `${root}: ${deleted} held ${deleted === 1 ? 'deletion' : 'deletions'} sent to the service`
          : `${root}: ${plural(restored, 'file')} put back on disk from the service's copy`,
      );
      for (const file of kept) out(`  ${file.flowPath}/${file.path}: what was on disk is ${file.where}`);
      sayNotWritten(notWritten);
      count += notWritten.length;
    }
    return count;
  });
  if (unwritten > 0) process.exitCode = EXIT.attention;
}

/** Whether a place in the repository ('' for the repository itself) is the file or a folder above it. */
function covers(target: string, file: string): boolean {
  return target === '' || file === target || file.startsWith(`${target}/`);
}
