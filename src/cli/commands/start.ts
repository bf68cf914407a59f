import { Command, Option } from 'commander';
import { parsePort } from '../options.ts';
import { urlOption } from '../service-url.ts';
import { UsageError } from '../usage-error.ts';
// The agent itself is loaded when the command runs: `start --help` loaded the whole agent and window for its text
// (1.1 s of CPU against 0.3 s, and 20 such at once timed out on two loaded cores).
import type { RunOptions, runAgent as theAgent } from '../run-agent.ts';

const runAgent: typeof theAgent = async (...args) => (await import('../run-agent.ts')).runAgent(...args);

export function startCommand(): Command {
  return new Command('start')
    .description(
      'Adds the folders to the repositories flowsync keeps in sync (saved in the config file), syncs every\n' +
        'flow folder (each folder under flows/) with the service, then watches and sends each change as it\n' +
        'happens, printing one line per sync. Without a service URL (--url, $FLOWSYNC_URL or the config file)\n' +
        'the service runs inside the agent. Ctrl-C stops cleanly; nothing pending is lost.',
    )
    .argument('[folders...]', 'repository folders to add (default: those already added)')
    .addOption(urlOption())
    .addHelpText(
      'after',
      '\nExamples:\n  $ npm start -- ~/code/app\n  $ flowsync start ~/code/app ~/code/api\n  $ flowsync start\n' +
        '  $ flowsync start ~/code/app --rename    # after `git remote set-url origin git@github.com:acme/app2.git`',
    )
    .addOption(
      new Option('--ui-port <port>', "port of the window's loopback address")
        .argParser(parsePort)
        .default(0, 'any free port, another each run'),
    )
    .option(
      '--source',
      "sync these folders' repositories from these checkouts, instead of the checkouts they are synced from now (a worktree, another clone)",
    )
    .option(
      '--rename',
      'sync these folders under the names their origin gives them now (after `git remote set-url`): the new name gets every file, and the old name keeps its files on the service',
    )
    .action((folders: string[], options: RunOptions) => {
      if (options.source && folders.length === 0)
        throw new UsageError('--source needs the folder to sync from: `flowsync start <folder> --source`.');
      if (options.rename && folders.length === 0)
        throw new UsageError(
          '--rename needs the folder whose name changed: `flowsync start <folder> --rename`.',
        );
      return runAgent(folders, options, true);
    });
}

export function uiCommand(): Command {
  return new Command('ui')
    .description(
      'Runs the agent (the repositories already added) and serves its window at a loopback address of its own\n' +
        '(http://<random>.localhost:<port>/, new each run: Chromium and Firefox open it; Safari does not). On a\n' +
        'terminal it prints an address that opens the window once; --open opens it in your browser (a new\n' +
        'window each time, also when an agent already runs). Like `flowsync start`, it syncs and watches until\n' +
        'Ctrl-C; repositories can be added from the window.',
    )
    .addOption(urlOption())
    .addOption(
      new Option('--ui-port <port>', 'port of the loopback address')
        .argParser(parsePort)
        .default(0, 'any free port, another each run'),
    )
    .option('--open', 'open the window in the browser ($BROWSER, else the system opener)')
    .addHelpText('after', '\nExamples:\n  $ flowsync ui --open\n  $ flowsync ui --ui-port 8384')
    .action((options: RunOptions) => runAgent([], options, false));
}
