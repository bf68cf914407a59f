import { Command } from 'commander';
import { Agent, configuredRepository, loadConfig, pauseOf } from '../../agent/index.ts';
import {
  changeSetWords,
  describeFileWarning,
  needsOf,
  plural,
  printable,
  warnedPath,
} from '../../protocol/index.ts';
import { EXIT } from '../exit-codes.ts';
import { urlOption } from '../service-url.ts';
import { lockForSync } from '../running-agent.ts';
import { dryRun } from './dry-run.ts';
import { localTime } from '../local-time.ts';
import { syncLine } from '../terminal-lines.ts';
import { where } from '../where.ts';
import { findRunningAgent } from '../../host/index.ts';
import { bridgeAnswers } from '../../window/index.ts';
import { withAgentApi } from '../agent-api.ts';

export function syncCommand(): Command {
  return new Command('sync')
    .description(
      'Scans the folders, sends what differs from what the service has, and exits: 0 when everything went\n' +
        'through, 1 when the service refused a flow, 2 when a folder has none of its flow folders (nothing to sync),\n' +
        "3 when it could not be reached, 4 when a file is in conflict with the service's version or deletions are\n" +
        'held (more than the repository deletes without asking: --yes sends them), or a folder is paused\n' +
        '(`flowsync resume` resumes it). For scripts and CI; the\n' +
        'folders are not added to the ones `flowsync start` watches. While an agent runs it owns the state and\n' +
        'sends every change itself: sync refuses (exit 2) and says so, except `sync --yes`, which hands the\n' +
        'deletions held to the running agent to send.',
    )
    .argument('<folders...>', 'repository folders')
    .addOption(urlOption())
    .option(
      '--yes',
      'send deletions held for being many (a branch switch, a removed folder): by default a round that deletes more than 100 files or a quarter of the repository waits',
    )
    .option(
      '--keep',
      "keep git's changes held here (a branch switch, `git checkout --` on a service others write to): not sent while the files stay as git left them, and no longer asked about",
    )
    .option(
      '--dry-run',
      'print what would be sent, flow by flow (+ new, ~ changed, - deleted), and change nothing: no call writes to the service, and the state is scanned into a copy',
    )
    .addHelpText(
      'after',
      '\nExamples:\n  $ flowsync sync .\n  $ flowsync sync --dry-run .\n  $ flowsync sync --yes .\n' +
        '  $ flowsync sync ~/code/app --url https://flows.example.com',
    )
    .action(
      async (
        folders: string[],
        options: { url?: string; dryRun?: boolean; yes?: boolean; keep?: boolean },
      ) => {
        // The hint for held deletions works while an agent runs too: it sends them, as `resolve --held
        // --mine` does through its window's bridge.
        if (
          (options.yes || options.keep) &&
          !options.dryRun &&
          (await findRunningAgent(bridgeAnswers))?.bridge
        )
          return sendHeldThroughAgent(folders, options);
        const lock = await lockForSync((line) => process.stderr.write(`${printable(line)}\n`));
        const config = loadConfig();
        if (options.dryRun) {
          try {
            return await dryRun(folders, config, options.url, (line) => process.stdout.write(`${line}\n`));
          } finally {
            lock.release();
          }
        }
        const agent = await Agent.open({ config, serviceUrl: options.url });
        try {
          let refused = 0;
          let waiting = 0;
          let empty = 0;
          for (const folder of folders) {
            const configured = configuredRepository(config, folder);
            // Paused by its user: a sync would send what the pause holds back. Said, and counted as waiting (exit 4).
            const pause = pauseOf(configured);
            if (configured && pause) {
              const since = pause.since ? ` since ${localTime(pause.since)}` : '';
              process.stdout.write(
                `${printable(`${configured.path}: paused${since}, nothing sent: \`flowsync resume ${configured.path}\` resumes it`)}\n`,
              );
              waiting++;
              continue;
            }
            const watched = await agent.addRepository(folder, configured);
            let report = await watched.engine.syncOnce();
            if (options.keep)
              for (const set of watched.engine.keepGitChanges())
                process.stdout.write(
                  `${printable(`${watched.identity.root}: ${changeSetWords(set)} kept here, not sent`)}\n`,
                );
            // Git's change sets held: with --yes, confirmed and sent in a second round, as held deletions.
            const gitSets = options.yes ? watched.engine.confirmGitChanges() : [];
            // Held deletions are known once the round has looked: with --yes, a second round sends them.
            if (options.yes && (watched.engine.status().heldDeletions > 0 || gitSets.length > 0)) {
              watched.engine.confirmDeletions();
              report = await watched.engine.syncOnce();
            }
            for (const set of gitSets)
              process.stdout.write(
                `${printable(`${watched.identity.root}: ${changeSetWords(set)} sent to the team`)}\n`,
              );
            const described = agent.describe(watched.identity.root);
            // No flow root there: "up to date" would be untrue of a folder that has nothing to be up to date with.
            const nothing = watched.engine.nothingToSync();
            if (nothing !== null) empty++;
            const line =
              nothing === null
                ? syncLine(watched, report, null, described?.branch ?? null, agent.serviceUrl)
                : `${where(watched.identity, described?.branch ?? null)}: ${nothing}`;
            process.stdout.write(`${printable(line)}\n`);
            // Its origin renamed it: synced under the old name (as `start` does), and said until it is moved.
            if (described?.rename) process.stderr.write(`warning: ${printable(described.rename.message)}\n`);
            const status = watched.engine.status();
            const { counts, message } = status;
            refused += counts.rejected;
            // What waits for its user (needsOf): conflicts, deletions held, files on the service not in this checkout.
            waiting += needsOf(status).length;
            // What the repository's owner must fix (a .gitignore line not applied, a flow root that is a link).
            if (message && message !== nothing)
              process.stderr.write(
                `warning: ${printable(`${watched.identity.owner}/${watched.identity.name}: ${message}`)}\n`,
              );
            for (const warning of agent.notSent(watched.identity.root)) {
              process.stderr.write(
                `warning: ${printable(`${warnedPath(warning)} not sent: ${describeFileWarning(warning.warning)}`)}\n`,
              );
            }
          }
          // A folder with nothing to sync is a folder given by mistake (or flow folders not set yet): a script that
          // syncs it must not take it for a success.
          process.exitCode =
            refused > 0 ? EXIT.remote : waiting > 0 ? EXIT.attention : empty > 0 ? EXIT.usage : EXIT.ok;
        } finally {
          await agent.close();
          lock.release();
        }
      },
    );
}

/**
 * `sync --yes` while an agent runs: the deletions held in these folders are sent by the running agent (which owns
 * the state), each folder's line says how many; nothing else is synced here, the agent sends every other change.
 */
async function sendHeldThroughAgent(
  folders: string[],
  options: { url?: string; yes?: boolean; keep?: boolean },
): Promise<void> {
  await withAgentApi(folders, options, async (call, roots) => {
    const { pid } = (await findRunningAgent(bridgeAnswers)) ?? { pid: null };
    const by = pid === null ? 'the running agent' : `the running agent (pid ${pid})`;
    for (const root of roots) {
      // Git's change sets first: their deletions are confirmed with them, and the held deletions' line counts them.
      const choice = options.keep ? 'keep' : 'send';
      const { sets, teammates } = await call('settleGitChanges', { root, choice });
      const team = teammates.length > 0 ? ` (${teammates.join(', ')})` : '';
      for (const set of sets)
        process.stdout.write(
          `${printable(`${root}: ${changeSetWords(set)} ${choice === 'send' ? `sent to the team${team}` : 'kept here, not sent'} by ${by}`)}\n`,
        );
      if (!options.yes) continue;
      const { deleted } = await call('settleDeletions', { root, choice: 'delete' });
      process.stdout.write(
        `${printable(
          deleted === 0
            ? `${root}: no deletions held; ${by} keeps it in sync`
            : `${root}: ${plural(deleted, 'held deletion')} sent to the service by ${by}`,
        )}\n`,
      );
    }
  });
}
