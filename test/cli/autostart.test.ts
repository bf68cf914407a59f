import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { autostartEntry, type AutostartEntry } from '../../src/host/index.ts';
import { FLOWSYNC_BIN, runFlowsync } from '../support/cli.ts';
import { startProgram, userEnv } from '../support/agent-process.ts';
import { startTestService, type TestService } from '../support/service.ts';

let dir: string;
let env: NodeJS.ProcessEnv;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'flowsync-autostart-'));
  const runtime = join(dir, 'run');
  mkdirSync(runtime);
  env = {
    ...userEnv(join(dir, 'home')),
    // No systemd user instance to reach, whatever this machine has: the command must take the XDG path, and a
    // test never enables a unit in the developer's own systemd.
    XDG_RUNTIME_DIR: runtime,
    DBUS_SESSION_BUS_ADDRESS: `unix:path=${join(runtime, 'no-bus')}`,
  };
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** ExecStart's words as systemd reads them: double quotes group, backslash escapes, `%%` and `$$` are literal. */
function systemdWords(line: string): string[] {
  const words: string[] = [];
  const pattern = /"((?:[^"\\]|\\.)*)"|(\S+)/g;
  for (const match of line.matchAll(pattern)) {
    const raw = match[1] ?? match[2]!;
    words.push(raw.replace(/\\(.)/g, '$1').replace(/%%/g, '%').replace(/\$\$/g, '$'));
  }
  return words;
}

function execStart(entry: AutostartEntry): string[] {
  const line = entry.content.split('\n').find((l) => l.startsWith('ExecStart='));
  if (!line) throw new Error(`no ExecStart in\n${entry.content}`);
  return systemdWords(line.slice('ExecStart='.length));
}

describe('flowsync autostart', () => {
  it('enables, reports and disables start at login (an XDG autostart entry where systemd is absent)', async () => {
    const file = join(dir, 'home/.config/autostart/flowsync.desktop');
    expect((await runFlowsync(['autostart', 'status'], { env })).stdout).toMatch(/^disabled: /);

    const enabled = await runFlowsync(['autostart', 'enable'], { env });
    expect(enabled.code).toBe(0);
    expect(enabled.stdout).toContain(`flowsync starts when you log in: ${file} (an XDG autostart entry`);
    const entry = readFileSync(file, 'utf8');
    expect(entry).toContain('[Desktop Entry]\nType=Application\n');
    expect(entry).toContain(`\nExec="${process.execPath}" "${FLOWSYNC_BIN}" "ui"\n`);

    const status = await runFlowsync(['autostart', 'status'], { env });
    expect(status.stdout).toBe(`enabled: ${file} runs ${process.execPath} ${FLOWSYNC_BIN} ui\n`);

    const disabled = await runFlowsync(['autostart', 'disable'], { env });
    expect(disabled.stdout).toBe(`flowsync no longer starts at login (removed ${file}).\n`);
    expect(existsSync(file)).toBe(false);
  });

  it('says an entry left by another flowsync is stale, and enable points it at this one', async () => {
    const file = join(dir, 'home/.config/autostart/flowsync.desktop');
    mkdirSync(join(dir, 'home/.config/autostart'), { recursive: true });
    writeFileSync(file, '[Desktop Entry]\nExec="/old/node" "/old/flowsync.js" "ui"\n');
    expect((await runFlowsync(['autostart', 'status'], { env })).stdout).toMatch(/runs another flowsync/);
    await runFlowsync(['autostart', 'enable'], { env });
    expect((await runFlowsync(['autostart', 'status'], { env })).stdout).toMatch(/^enabled: /);
  });

  it('refuses an unknown action as a usage error, in one line', async () => {
    const result = await runFlowsync(['autostart', 'sometimes'], { env });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(
      /'sometimes' is invalid for argument 'action'\. give enable, disable or status\./,
    );
    expect(result.stderr).not.toMatch(/\n\s+at /);
  });
});

describe('the systemd user unit', () => {
  let svc: TestService;
  beforeEach(async () => {
    svc = await startTestService();
  });
  afterEach(async () => {
    await svc.close();
  });

  const command = [process.execPath, FLOWSYNC_BIN, 'ui'];

  it('restarts the agent on failure, sends its errors to the journal and keeps the token out of it', () => {
    const unit = autostartEntry(command, { kind: 'systemd', env });
    expect(unit.path).toBe(join(dir, 'home/.config/systemd/user/flowsync.service'));
    const lines = unit.content.split('\n');
    for (const line of [
      '[Service]',
      'Type=simple',
      'Restart=on-failure',
      'StandardOutput=null',
      'StandardError=journal',
      '[Install]',
      'WantedBy=default.target',
    ]) {
      expect(lines).toContain(line);
    }
    expect(execStart(unit)).toEqual(command);
  });

  it('quotes ExecStart so that spaces, % and $ in a path stay one literal argument', () => {
    const odd = ['/opt/my node/bin/node', '/home/ada/100% "sync"/$HOME\\flowsync.js', 'ui'];
    expect(execStart(autostartEntry(odd, { kind: 'systemd', env }))).toEqual(odd);
  });

  it('runs the agent with exactly its ExecStart line, which stops cleanly on SIGTERM', async () => {
    const [program, ...args] = execStart(autostartEntry(command, { kind: 'systemd', env }));
    const agent = startProgram(program!, args, { ...env, ...userEnv(join(dir, 'home'), svc) });
    try {
      await agent.waitFor(/Watching 0 repositories/, 30_000);
    } finally {
      agent.signal('SIGTERM');
    }
    expect(await agent.exitWithin()).toBe(0);
    expect(agent.output()).toContain('Stopped; everything was in sync.');
  });

  it('passes systemd-analyze verify where systemd is installed', () => {
    const unit = autostartEntry(command, { kind: 'systemd', env });
    mkdirSync(join(dir, 'home/.config/systemd/user'), { recursive: true });
    writeFileSync(unit.path, unit.content);
    const analyze = spawnSync('systemd-analyze', ['verify', unit.path], { encoding: 'utf8' });
    // Machines without systemd have no systemd-analyze: the unit's content is checked above all the same.
    // (`--user` needs a running user manager; the system manager parses a unit file by the same rules.)
    if ((analyze.error as NodeJS.ErrnoException | undefined)?.code === 'ENOENT') return;
    expect(analyze.stderr.split('\n').filter((line) => line.includes('flowsync'))).toEqual([]);
    expect(analyze.status).toBe(0);
  });
});
