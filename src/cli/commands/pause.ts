import { Command } from 'commander';
import {
  checkRepositoryFolder,
  configuredRepository,
  loadConfig,
  saveConfig,
  withPausedRepository,
} from '../../agent/index.ts';
import { inSyncOf, printable } from '../../protocol/index.ts';
import { bridgeAnswers, repositoryViewSchema, type RepositoryView } from '../../window/index.ts';
import { findRunningAgent } from '../../host/index.ts';
import { runningAgentBridge } from '../agent-bridge.ts';
import { UsageError } from '../usage-error.ts';

/** `flowsync pause`: nothing of these repositories is sent until resumed; their changes are still counted. */
export function pauseCommand(): Command {
  return pausing('pause');
}

/** `flowsync resume`: what changed while paused is sent at once. */
export function resumeCommand(): Command {
  return pausing('resume');
}

function pausing(command: 'pause' | 'resume'): Command {
  const pause = command === 'pause';
  return new Command(command)
    .description(
      pause
        ? 'Pauses syncing of repositories: nothing is sent until `flowsync resume`. Changes made meanwhile\n' +
            'are still watched and counted as pending (`flowsync status` says how many), and the pause is kept\n' +
            'across restarts. Tells the running agent, else the config file.'
        : 'Resumes syncing of paused repositories: what changed while they were paused is sent at once (by the\n' +
            'running agent; else at the next `flowsync start`).',
    )
    .argument('[folders...]', 'repository folders (default: the current one)')
    .option('--all', `${command} every repository of the config file`)
    .addHelpText(
      'after',
      `\nExamples:\n  $ flowsync ${command}\n  $ flowsync ${command} ~/code/app\n  $ flowsync ${command} --all\n`,
    )
    .action(async (folders: string[], options: { all?: boolean }) => {
      const out = (line: string) => process.stdout.write(`${printable(line)}\n`);
      const config = loadConfig();
      const roots = options.all
        ? config.repositories.map((repo) => repo.path)
        : (folders.length > 0 ? folders : ['.']).map((folder) => {
            const root = checkRepositoryFolder(folder);
            if (!configuredRepository(config, root))
              throw new UsageError(`${root} is not synced by flowsync: \`flowsync start ${root}\` adds it.`);
            return root;
          });
      if (roots.length === 0)
        throw new UsageError('No repositories yet: `flowsync start <folder>` adds one.');
      const running = await findRunningAgent(bridgeAnswers);
      // Still in its first sync (its window is not up): the file written here would be rewritten by the agent, which
      // would go on sending meanwhile.
      if (running && !running.bridge && running.command !== 'sync')
        throw new UsageError(
          `The agent (pid ${running.pid}) is starting: \`flowsync ${command}\` again once it says "Watching", or use its window.`,
        );
      if (running?.bridge) {
        // The running agent owns the config while it runs: it pauses its engine and writes the file itself.
        const bridge = runningAgentBridge({ ...running, bridge: running.bridge });
        for (const root of roots) {
          const view = repositoryViewSchema.parse(
            await bridge.call(pause ? 'pauseRepository' : 'resumeRepository', { root }),
          );
          const name = `${view.owner}/${view.name}`;
          out(
            pause
              ? `${name}: paused; changes are counted and sent when resumed (flowsync resume ${view.root})`
              : `${name}: resumed${resumedWords(view)}`,
          );
        }
        return;
      }
      let changed = config;
      const since = new Date().toISOString();
      for (const root of roots) changed = withPausedRepository(changed, root, pause ? { since } : null);
      saveConfig(changed);
      for (const root of roots)
        out(
          pause
            ? `${root}: paused; no agent is running: it stays paused when one starts (flowsync resume ${root})`
            : `${root}: resumed; no agent is running: \`flowsync start\` syncs it`,
        );
    });
}

/** After `resumed`: `, in sync`, else what there is (inSyncOf: what is still to send, what waits for its user). */
function resumedWords(view: RepositoryView): string {
  const verdict = inSyncOf(view);
  return verdict.inSync ? ', in sync' : `; ${verdict.line}`;
}
