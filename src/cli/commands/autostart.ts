import { Command, InvalidArgumentError } from 'commander';
import {
  agentCommand,
  autostartEntry,
  autostartKind,
  autostartState,
  disableAutostart,
  enableAutostart,
  type AutostartKind,
} from '../../host/index.ts';

const ACTIONS = ['enable', 'disable', 'status'] as const;
type Action = (typeof ACTIONS)[number];

const HOW: Record<AutostartKind, string> = {
  systemd:
    'a systemd user unit; `systemctl --user start flowsync` starts it now, `journalctl --user -u flowsync` shows its errors',
  xdg: 'an XDG autostart entry, which your desktop session runs when you log in',
  launchd: 'a LaunchAgent; its errors go to ~/Library/Logs/flowsync.log',
  'startup-folder': 'a script in your Startup folder',
};

export function autostartCommand(): Command {
  return new Command('autostart')
    .description(
      'Starts the agent (`flowsync ui`: the repositories already added) when you log in, as this OS does it\n' +
        'for a user: a systemd user unit (else an XDG autostart entry) on Linux, a LaunchAgent on macOS, a\n' +
        'Startup-folder script on Windows. It runs this flowsync, with this Node.',
    )
    .argument('<action>', 'enable, disable or status', parseAction)
    .addHelpText(
      'after',
      '\nExamples:\n  $ flowsync autostart enable\n  $ flowsync autostart status\n  $ flowsync autostart disable',
    )
    .action((action: Action) => {
      const command = agentCommand();
      const entry = autostartEntry(command, { kind: autostartKind() });
      const out = (line: string) => process.stdout.write(`${line}\n`);
      if (action === 'enable') {
        enableAutostart(entry);
        out(`flowsync starts when you log in: ${entry.path} (${HOW[entry.kind]}).`);
      } else if (action === 'disable') {
        const state = autostartState(entry);
        disableAutostart(entry);
        out(
          state === 'disabled'
            ? 'flowsync was not set to start at login.'
            : `flowsync no longer starts at login (removed ${entry.path}).`,
        );
      } else {
        const state = autostartState(entry);
        if (state === 'enabled') out(`enabled: ${entry.path} runs ${command.join(' ')}`);
        else if (state === 'stale')
          out(
            `enabled, but ${entry.path} runs another flowsync: \`flowsync autostart enable\` points it at this one.`,
          );
        else out('disabled: `flowsync autostart enable` starts flowsync when you log in.');
      }
    });
}

function parseAction(value: string): Action {
  if ((ACTIONS as readonly string[]).includes(value)) return value as Action;
  throw new InvalidArgumentError('give enable, disable or status.');
}
