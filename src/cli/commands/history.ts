import { Command } from 'commander';
import { cappedLine, plural, printable, printableJson } from '../../protocol/index.ts';
import { withAgentApi } from '../agent-api.ts';
import { repositoryPathOf } from '../repository-path.ts';
import { urlOption } from '../service-url.ts';
import { UsageError } from '../usage-error.ts';
import { EXIT } from '../exit-codes.ts';

export function historyCommand(): Command {
  return new Command('history')
    .usage('[options] <file> | purge [options] <file>')
    .description(
      'Lists every version the service keeps of a file (30 days by default), newest first: its number,\n' +
        'when, who wrote it (which checkout) and its size; a deletion is a version too, so a file deleted\n' +
        'here or by a teammate can be found and restored (`flowsync restore`).',
    )
    .argument('<file>', 'a file of a flow, as a path (it may be gone from disk)')
    .addOption(urlOption())
    .option('--json', 'print as JSON')
    .addHelpText(
      'after',
      '\nExamples:\n  $ flowsync history flows/ci/build.yml\n  $ flowsync history flows/ci/old.yml --json\n' +
        '  $ flowsync history purge flows/ci/.env      (an operator: removes its past versions)',
    )
    .addCommand(purgeCommand())
    .action(async (file: string, options: { url?: string; json?: boolean }) => {
      const { folder, inside } = repositoryPathOf(file);
      const history = await withAgentApi([folder], options, (call, [root]) =>
        call('fileHistory', { root: root!, file: inside }),
      );
      const out = (line: string) => void process.stdout.write(`${printable(line)}\n`);
      if (options.json) return void process.stdout.write(`${printableJson(history)}\n`);
      for (const purge of history.purges) out(purgeLine(`${history.flowPath}/${history.path}`, purge));
      if (history.versions.length === 0) return out(`${inside}: the service keeps no version of it`);
      out(`${history.flowPath}/${history.path}:`);
      for (const v of history.versions)
        out(
          `  ${String(v.version).padStart(6)}  ${when(v.writtenAt)}  ` +
            `${v.hash === null ? 'deleted' : `${v.size} bytes`}  ${v.writtenBy ?? 'unnamed writer'}` +
            (v.current ? '  (current)' : '') +
            (v.conflictCopy ? "  (conflict copy: what was on disk when it took the service's version)" : ''),
        );
      if (history.capped) out(cappedLine(history.capped));
      out(`Restore one: flowsync restore ${inside} --version N`);
      const kept = stillInHistory(history.versions);
      if (kept > 0)
        out(
          `${history.flowPath}/${history.path} is deleted, but ${plural(kept, 'version')} of its content ` +
            `${kept === 1 ? 'is' : 'are'} still in the service's history (until the retention removes ${kept === 1 ? 'it' : 'them'}): ` +
            `an operator removes ${kept === 1 ? 'it' : 'them'} now with \`flowsync history purge ${inside}\` (admin token).`,
        );
    });
}

/**
 * How many versions with content a deleted file still has in the history (0 when the file is not deleted): a
 * secret deleted from disk is still on the service until they are purged or past the retention.
 */
export function stillInHistory(versions: readonly { hash: string | null; current: boolean }[]): number {
  const current = versions.find((v) => v.current);
  if (!current || current.hash !== null) return 0;
  return versions.filter((v) => v.hash !== null).length;
}

const when = (iso: string) => iso.replace('T', ' ').replace(/\.\d+Z$|Z$/, ' UTC');

function purgeLine(
  file: string,
  purge: { version: number | null; versions: number; purgedAt: string; purgedBy: string | null },
) {
  const what = purge.version === null ? plural(purge.versions, 'past version') : `version ${purge.version}`;
  return `${file}: ${what} purged from the history by ${purge.purgedBy ?? 'an operator (no name given)'} at ${when(purge.purgedAt)}`;
}

function purgeCommand(): Command {
  return new Command('purge')
    .summary("remove a file's past versions from the service's history (an operator's command)")
    .description(
      "Removes a file's past versions from the service's history, all of them or --version N, with the admin\n" +
        'token (`flowsync login --admin`, or FLOWSYNC_ADMIN_TOKEN): for a secret that reached the service before\n' +
        "its .gitignore line. The file's current version stays (delete the file first); a tombstone says who\n" +
        'purged and when, and `flowsync history` shows it.',
    )
    .argument('<file>', 'a file of a flow, as a path (it may be gone from disk)')
    .option('--version <n>', 'only this version (a number from `flowsync history`)', (value) => {
      const n = Number(value);
      if (!Number.isInteger(n) || n < 1)
        throw new UsageError(`--version ${value}: give a version number from \`flowsync history\`.`);
      return n;
    })
    .addOption(urlOption())
    .addHelpText(
      'after',
      '\nExamples:\n  $ flowsync history purge flows/ci/.env\n  $ flowsync history purge flows/ci/build.yml --version 1042',
    )
    .action(async (file: string, options: { url?: string; version?: number }) => {
      const { folder, inside } = repositoryPathOf(file);
      const purged = await withAgentApi([folder], options, (call, [root]) =>
        call('purgeHistory', { root: root!, file: inside, version: options.version }),
      );
      const out = (line: string) => void process.stdout.write(`${printable(line)}\n`);
      if (purged.purge.versions === 0)
        return out(`${purged.flowPath}/${purged.path}: no past version to purge; nothing was removed`);
      out(purgeLine(`${purged.flowPath}/${purged.path}`, purged.purge));
    });
}

export function restoreCommand(): Command {
  return new Command('restore')
    .description(
      'Writes a version the service keeps of a file to disk (`flowsync history` lists them): --version N,\n' +
        'or --at TIME for the version current then. A deleted file comes back; a version that is a deletion\n' +
        'removes it. The file is then sent as any edit of yours (by the running agent, or `flowsync sync`);\n' +
        'when the service holds a newer version than the one last synced here, it is a conflict to settle\n' +
        '(`flowsync resolve`), exit 4.',
    )
    .argument('<file>', 'a file of a flow, as a path (it may be gone from disk)')
    .option('--version <n>', 'the version number', (value) => {
      const n = Number(value);
      if (!Number.isInteger(n) || n < 1)
        throw new UsageError(`--version ${value}: give a version number from \`flowsync history\`.`);
      return n;
    })
    .option('--at <time>', 'the version current at this time (ISO 8601, e.g. 2026-11-24T17:00:00Z)')
    .addOption(urlOption())
    .addHelpText(
      'after',
      '\nExamples:\n  $ flowsync restore flows/ci/build.yml --version 1042\n  $ flowsync restore flows/ci/old.yml --at 2026-11-24T17:00:00Z',
    )
    .action(async (file: string, options: { url?: string; version?: number; at?: string }) => {
      if ((options.version === undefined) === (options.at === undefined))
        throw new UsageError('Say which version: --version N (see `flowsync history`) or --at TIME.');
      const at = options.at === undefined ? null : Date.parse(options.at);
      if (at !== null && Number.isNaN(at))
        throw new UsageError(`--at ${options.at}: give a time as 2026-11-24T17:00:00Z.`);
      const { folder, inside } = repositoryPathOf(file);
      const restored = await withAgentApi([folder], options, async (call, [root]) => {
        let version = options.version;
        if (at !== null) {
          const { versions } = await call('fileHistory', { root: root!, file: inside });
          version = versions.find((v) => Date.parse(v.writtenAt) <= at)?.version;
          if (version === undefined)
            throw new UsageError(`${inside} has no version kept from before ${options.at}.`);
        }
        return call('restoreVersion', { root: root!, file: inside, version: version! });
      });
      const done = `version ${restored.version} ${restored.deleted ? 'removed the file (it was a deletion)' : 'is on disk'}`;
      const by = restored.serviceWrittenBy ? ` (by ${restored.serviceWrittenBy})` : '';
      const said = {
        sent: 'it is sent as your edit',
        current: 'the service holds this version already: nothing to send',
        conflict:
          `the service holds a newer version${by}: nothing is sent, it is a conflict: \`flowsync resolve ${file} --mine\` ` +
          "sends this one on top, --theirs takes the service's",
      }[restored.outcome];
      const kept = restored.kept ? `; what was on disk is ${restored.kept}` : '';
      process.stdout.write(
        `${printable(`${restored.flowPath}/${restored.path}: ${done}; ${said}${kept}`)}\n`,
      );
      // A conflict waits for its user, as `flowsync conflicts` says of it (exit 4).
      if (restored.outcome === 'conflict') process.exitCode = EXIT.attention;
    });
}
