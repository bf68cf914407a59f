import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';

/**
 * Starting the agent when the user logs in, the way each OS does it for a per-user background program: a systemd
 * user unit (restarted on failure, its output in the journal), else an XDG autostart entry (Linux desktops
 * without systemd), a LaunchAgent on macOS, a script in the Startup folder on Windows.
 */
export type AutostartKind = 'systemd' | 'xdg' | 'launchd' | 'startup-folder';

export interface AutostartEntry {
  kind: AutostartKind;
  /** The file that makes it start. */
  path: string;
  content: string;
}

export interface AutostartPlace {
  kind: AutostartKind;
  home?: string;
  env?: NodeJS.ProcessEnv;
}

const UNIT = 'flowsync.service';
const LABEL = 'dev.flowsync.agent';

/**
 * How this machine starts a user's programs at login: on Linux a systemd user instance where one answers
 * (`systemctl --user`), else the XDG autostart folder that desktop sessions read.
 */
export function autostartKind(platform: NodeJS.Platform = process.platform): AutostartKind {
  if (platform === 'darwin') return 'launchd';
  if (platform === 'win32') return 'startup-folder';
  return systemctl(['show-environment']) ? 'systemd' : 'xdg';
}

/** The file for `command` (the program and its arguments, e.g. node, flowsync.js, `ui`): where, and what it says. */
export function autostartEntry(command: readonly string[], place: AutostartPlace): AutostartEntry {
  const env = place.env ?? process.env;
  const home = place.home ?? homedir();
  const config = env.XDG_CONFIG_HOME || join(home, '.config');
  switch (place.kind) {
    case 'systemd':
      return { kind: 'systemd', path: join(config, 'systemd/user', UNIT), content: systemdUnit(command) };
    case 'xdg':
      return {
        kind: 'xdg',
        path: join(config, 'autostart/flowsync.desktop'),
        content: desktopEntry(command),
      };
    case 'launchd':
      return {
        kind: 'launchd',
        path: join(home, 'Library/LaunchAgents', `${LABEL}.plist`),
        content: launchAgent(command, join(home, 'Library/Logs/flowsync.log')),
      };
    case 'startup-folder': {
      const appData = env.APPDATA || join(home, 'AppData', 'Roaming');
      const folder = join(appData, 'Microsoft', 'Windows', 'Start Menu', 'Programs', 'Startup');
      return { kind: 'startup-folder', path: join(folder, 'flowsync.cmd'), content: startupScript(command) };
    }
  }
}

/** Writes the entry (and tells systemd about it); from the next login on, the agent starts by itself. */
export function enableAutostart(entry: AutostartEntry): void {
  mkdirSync(dirname(entry.path), { recursive: true });
  writeFileSync(entry.path, entry.content, { mode: 0o644 });
  if (entry.kind === 'systemd') {
    systemctl(['daemon-reload']);
    if (!systemctl(['enable', UNIT])) {
      throw new Error(`systemctl --user enable ${UNIT} failed; the unit is at ${entry.path}.`);
    }
  }
}

export function disableAutostart(entry: AutostartEntry): void {
  if (entry.kind === 'systemd' && existsSync(entry.path)) systemctl(['disable', UNIT]);
  rmSync(entry.path, { force: true });
  if (entry.kind === 'systemd') systemctl(['daemon-reload']);
}

/** Whether the entry is in place, and whether it still runs `command` (a moved install leaves a stale one). */
export function autostartState(entry: AutostartEntry): 'enabled' | 'disabled' | 'stale' {
  if (!existsSync(entry.path)) return 'disabled';
  return readFileSync(entry.path, 'utf8') === entry.content ? 'enabled' : 'stale';
}

function systemctl(args: string[]): boolean {
  try {
    execFileSync('systemctl', ['--user', ...args], { stdio: 'ignore', timeout: 10_000 });
    return true;
  } catch {
    return false;
  }
}

/** One argument as systemd reads ExecStart: double-quoted, with `%` (specifiers) and `$` (variables) doubled. */
export function systemdQuote(arg: string): string {
  const escaped = arg.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/%/g, '%%').replace(/\$/g, '$$$$');
  return `"${escaped}"`;
}

function systemdUnit(command: readonly string[]): string {
  return [
    '# Written by `flowsync autostart enable`; `flowsync autostart disable` removes it.',
    '[Unit]',
    'Description=flowsync agent: keeps flow folders in sync with the service',
    '',
    '[Service]',
    'Type=simple',
    `ExecStart=${command.map(systemdQuote).join(' ')}`,
    'Restart=on-failure',
    'RestartSec=5',
    // stdout is a line per sync, too many for a log (and, not being a terminal, it has no window token: see
    // src/cli/window-address.ts); errors go to the journal (`journalctl --user -u flowsync`).
    'StandardOutput=null',
    'StandardError=journal',
    '',
    '[Install]',
    'WantedBy=default.target',
    '',
  ].join('\n');
}

/** An argument of a desktop entry's Exec key: quoted, with the characters the spec reserves escaped. */
function desktopQuote(arg: string): string {
  const inQuotes = arg.replace(/[\\"`$]/g, (c) => `\\${c}`);
  // The Exec value is itself a string value, whose backslashes are escaped once more; % starts a field code.
  return `"${inQuotes.replace(/\\/g, '\\\\').replace(/%/g, '%%')}"`;
}

function desktopEntry(command: readonly string[]): string {
  return [
    '# Written by `flowsync autostart enable`; `flowsync autostart disable` removes it.',
    '[Desktop Entry]',
    'Type=Application',
    'Name=flowsync',
    'Comment=Keeps flow folders in sync with the service',
    `Exec=${command.map(desktopQuote).join(' ')}`,
    'Terminal=false',
    'NoDisplay=true',
    'X-GNOME-Autostart-enabled=true',
    '',
  ].join('\n');
}

function xml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

function launchAgent(command: readonly string[], log: string): string {
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    '<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">',
    '<plist version="1.0">',
    '<dict>',
    `  <key>Label</key><string>${LABEL}</string>`,
    '  <key>ProgramArguments</key>',
    '  <array>',
    ...command.map((arg) => `    <string>${xml(arg)}</string>`),
    '  </array>',
    '  <key>RunAtLoad</key><true/>',
    // Restarted when it fails, not when it stops cleanly: the same rule as the systemd unit's on-failure.
    '  <key>KeepAlive</key><dict><key>SuccessfulExit</key><false/></dict>',
    // Errors only: stdout is a line per sync (without a window token, as it is not a terminal).
    `  <key>StandardErrorPath</key><string>${xml(log)}</string>`,
    '</dict>',
    '</plist>',
    '',
  ].join('\n');
}

function startupScript(command: readonly string[]): string {
  const quoted = command.map((arg) => `"${arg.replace(/%/g, '%%')}"`).join(' ');
  // `start /min` returns at once, so the login does not wait; its console stays minimized.
  return [
    '@echo off',
    'rem Written by `flowsync autostart enable`.',
    `start "flowsync" /min ${quoted}`,
    '',
  ].join('\r\n');
}
