import { realpathSync } from 'node:fs';
import {
  autostartEntry,
  autostartKind,
  autostartState,
  disableAutostart,
  enableAutostart,
  type AutostartEntry,
  type AutostartKind,
} from './autostart.ts';

/**
 * The window's "Start at login": the same entry `flowsync autostart` writes (a systemd user unit, else an XDG
 * autostart entry, a LaunchAgent, a Startup-folder script), on every platform. Electron's login item would be the
 * native way on macOS and Windows; one implementation, tested here, is kept instead.
 */
export interface StartAtLogin {
  enabled: boolean;
  /** The entry exists but runs another flowsync (a moved install); enabling again points it at this one. */
  stale: boolean;
  kind: AutostartKind;
  path: string;
}

/**
 * What the entry runs: this flowsync, with this Node, as `flowsync ui` (the repositories already added). In the
 * desktop app's utility process `process.execPath` is the app itself, which cannot run a script without
 * ELECTRON_RUN_AS_NODE (a fuse turns that off): there the entry starts the app, which starts its agent.
 */
export function agentCommand(): string[] {
  if (process.versions.electron) return [process.execPath];
  // The script resolved: a global install's bin is a symlink into the package.
  return [process.execPath, realpathSync(process.argv[1]!), 'ui'];
}

/** `systemctl --user` is asked once: it blocks for up to 10 s where no user instance answers. */
let kind: AutostartKind | null = null;

function entry(): AutostartEntry {
  kind ??= autostartKind();
  return autostartEntry(agentCommand(), { kind });
}

export function startAtLogin(): StartAtLogin {
  const current = entry();
  const state = autostartState(current);
  return { enabled: state !== 'disabled', stale: state === 'stale', kind: current.kind, path: current.path };
}

export function setStartAtLogin(enabled: boolean): StartAtLogin {
  const current = entry();
  if (enabled) enableAutostart(current);
  else disableAutostart(current);
  return startAtLogin();
}
