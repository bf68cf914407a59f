import { Command } from 'commander';
import { cappedLine, printable, printableJson } from '../../protocol/index.ts';
import { withAgentApi } from '../agent-api.ts';
import { repositoryPathOf } from '../repository-path.ts';
import { urlOption } from '../service-url.ts';
import { UsageError } from '../usage-error.ts';

export function historyCommand(): Command {
  return new Command('history')
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
      '\nExamples:\n  $ flowsync history flows/ci/build.yml\n  $ flowsync history flows/ci/old.yml --json',
    )
    .action(async (file: string, options: { url?: string; json?: boolean }) => {
      const { folder, inside } = repositoryPathOf(file);
      const history = await withAgentApi([folder], options, (call, [root]) =>
        call('fileHistory', { root: root!, file: inside }),
      );
      const out = (line: string) => void process.stdout.write(`${printable(line)}\n`);
      if (options.json) return void process.stdout.write(`${printableJson(history)}\n`);
      if (history.versions.length === 0) return out(`${inside}: the service keeps no version of it`);
      out(`${history.flowPath}/${history.path}:`);
      for (const v of history.versions)
        out(
          `  ${String(v.version).padStart(6)}  ${v.writtenAt.replace('T', ' ').replace(/\.\d+Z$|Z$/, ' UTC')}  ` +
            `${v.hash === null ? 'deleted' : `${v.size} bytes`}  ${v.writtenBy ?? 'unnamed writer'}` +
            (v.current ? '  (current)' : ''),
        );
      if (history.capped) out(cappedLine(history.capped));
      out(`Restore one: flowsync restore ${inside} --version N`);
    });
}

export function restoreCommand(): Command {
  return new Command('restore')
    .description(
      'Writes a version the service keeps of a file to disk (`flowsync history` lists them): --version N,\n' +
        'or --at TIME for the version current then. A deleted file comes back; a version that is a deletion\n' +
        'removes it. The file is then sent as any edit of yours (by the running agent, or `flowsync sync`).',
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
      process.stdout.write(
        `${printable(
          `${restored.flowPath}/${restored.path}: version ${restored.version} ${restored.deleted ? 'removed the file (it was a deletion)' : 'is on disk'}; it is sent as your edit`,
        )}\n`,
      );
    });
}
