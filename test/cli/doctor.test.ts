import { chmodSync, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DOCTOR_CHECKS, doctorReportSchema } from '../../src/protocol/index.ts';
import {
  agentOnService,
  NO_KEYCHAIN,
  startProgram,
  writeAgentConfig,
  type AgentOnService,
} from '../support/agent-process.ts';
import { FLOWSYNC_BIN, runFlowsync } from '../support/cli.ts';
import { startTestService } from '../support/service.ts';

let user: AgentOnService;

beforeEach(async () => {
  user = await agentOnService({ 'flows/a/x.yaml': 'x\n', 'flows/b/y.yaml': 'y\n' });
});
afterEach(() => user.close());

/** A user with no service set: the agent runs its embedded one (test/support's userEnv 'embedded'). */
const EMBEDDED = {
  FLOWSYNC_URL: '',
  FLOWSYNC_TOKEN: '',
  FLOWSYNC_ADMIN_TOKEN: '',
  FLOWSYNC_EMBEDDED_PORT: '0',
};

function doctor(args: string[] = [], extra: NodeJS.ProcessEnv = {}) {
  return runFlowsync(['doctor', ...args], { env: { ...user.env, ...extra } });
}

/** The report's line that starts with this mark and check name, and the fix below it. */
function lineOf(stdout: string, start: string): string {
  const lines = stdout.split('\n');
  const at = lines.findIndex((line) => line.startsWith(start));
  if (at < 0) throw new Error(`no line starting with ${start} in:\n${stdout}`);
  return lines[at + 1]?.startsWith('    fix: ') ? `${lines[at]}\n${lines[at + 1]}` : lines[at]!;
}

describe('flowsync doctor', () => {
  it('passes everything with a running agent and its embedded service (exit 0), and leaves the lock to the agent', async () => {
    const agent = user.run(['start', user.repo.root], EMBEDDED);
    await agent.waitFor(/Watching 1 repository/, 60_000);
    const lockPath = join(user.dataDir, 'agent.lock');
    const lock = readFileSync(lockPath, 'utf8');

    const result = await doctor([], EMBEDDED);
    expect(result.code, result.stdout + result.stderr).toBe(0);
    expect(result.stdout).toContain(`[✓] agent: running (pid ${agent.pid}, since `);
    expect(result.stdout).toMatch(
      /\[✓\] service: the embedded service at http:\/\/127\.0\.0\.1:\d+ answers and takes your token \(from the OS keychain\)/,
    );
    expect(result.stdout).toContain('[✓] keychain: the OS keychain keeps secrets');
    expect(result.stdout).toContain(
      '[✓] data folder: ~/.local/share/flowsync is private (0700) and takes writes',
    );
    expect(result.stdout).toContain(`[✓] repository: local/repo (${user.repo.root}): 2 flows in flows/`);
    // The real kernel limit, read from /proc: the flow root and its two flows are 3 folders.
    const watches = lineOf(result.stdout, '[✓] inotify watches:');
    expect(watches).toContain('3 folders to watch, flowsync watches at most ');
    if (existsSync('/proc/sys/fs/inotify/max_user_watches')) expect(watches).toContain('max_user_watches');
    expect(result.stdout).toMatch(/\nNo problems found\.\n$/);
    // Not a second agent: the lock is the running agent's, unchanged, and the agent still runs.
    expect(readFileSync(lockPath, 'utf8')).toBe(lock);

    const json = await doctor(['--json'], EMBEDDED);
    expect(json.code, json.stderr).toBe(0);
    const checks = doctorReportSchema.parse(JSON.parse(json.stdout));
    expect(checks.map((check) => check.check)).toEqual([...DOCTOR_CHECKS]);
    expect(checks.every((check) => check.verdict === 'pass' && check.fix === null)).toBe(true);
    expect(checks.at(-1)).toMatchObject({ check: 'repository', folder: user.repo.root });

    // The agent's private socket is in its lock; one that could not make it (no place where its path fits a
    // socket's) is said, with what lets the next start make one.
    expect(JSON.parse(lock)).toMatchObject({ socket: join(user.dataDir, 'agent.sock') });
    writeFileSync(lockPath, `${JSON.stringify({ ...JSON.parse(lock), socket: null })}\n`, { mode: 0o600 });
    const unsocketed = await doctor([], EMBEDDED);
    expect(unsocketed.code, unsocketed.stdout).toBe(4);
    expect(lineOf(unsocketed.stdout, '[!] agent:')).toMatch(
      new RegExp(
        `^\\[!\\] agent: running \\(pid ${agent.pid}, since [^)]+\\), window at http://[a-z0-9]+\\.localhost:\\d+/, ` +
          'without a private socket: commands reach it over the window’s port, which other users of this machine ' +
          'can crowd\n    fix: a shorter data folder \\(\\$XDG_DATA_HOME\\) or a \\$XDG_RUNTIME_DIR lets the next start ' +
          'make one \\(its path must fit 100 bytes\\), then restart the agent$',
      ),
    );
    writeFileSync(lockPath, lock, { mode: 0o600 });
  });

  it('flags a data folder of mode 0755 and a repository folder gone, each with its fix, and changes nothing (exit 1)', async () => {
    const gone = join(user.repo.dir, 'gone');
    writeAgentConfig(user.env, [{ path: user.repo.root }, { path: gone }]);
    mkdirSync(user.dataDir, { recursive: true });
    chmodSync(user.dataDir, 0o755);

    const result = await doctor();
    expect(result.code, result.stdout + result.stderr).toBe(1);
    expect(lineOf(result.stdout, '[✗] data folder:')).toBe(
      '[✗] data folder: ~/.local/share/flowsync 0755: other users of this machine can read your synced flows ' +
        '(0700 for folders and 0600 for files expected)\n' +
        '    fix: chmod 0700 ~/.local/share/flowsync (the next `flowsync start` does it too)',
    );
    expect(statSync(user.dataDir).mode & 0o777).toBe(0o755);
    expect(lineOf(result.stdout, `[✗] repository: ${gone}`)).toBe(
      `[✗] repository: ${gone} is gone, so nothing of it syncs until it is back (nothing is deleted on the service meanwhile)\n` +
        '    fix: put it back (mount its drive, restore the folder), or Remove it in the window if it is gone for good ' +
        '(or delete its entry in ~/.config/flowsync/config.json)',
    );
    // The rest is as it should be: no agent runs (a warning), the service answers and takes the token.
    expect(lineOf(result.stdout, '[!] agent:')).toBe(
      '[!] agent: not running, so your 2 repositories are not synced now\n' +
        '    fix: `flowsync start` (`flowsync autostart enable` starts it when you log in)',
    );
    expect(result.stdout).toContain(
      `[✓] service: the service at ${user.svc.url} answers and takes your token (from FLOWSYNC_TOKEN)`,
    );
    expect(result.stdout).toMatch(/\[✓\] clock: this machine's and the service's agree \(within \d+ s\)/);
    expect(result.stdout).toMatch(/\n2 problems, 1 warning \(fixes above\)\.\n$/);
    expect(existsSync(join(user.dataDir, 'agent.lock'))).toBe(false);
  });

  it('flags a service that does not answer, and one that refuses the token, saying what to do', async () => {
    writeAgentConfig(user.env, [{ path: user.repo.root }]);
    const stopped = await startTestService();
    await stopped.close();

    const unreachable = await doctor([], { FLOWSYNC_URL: stopped.url });
    expect(unreachable.code).toBe(1);
    expect(lineOf(unreachable.stdout, '[✗] service:')).toMatch(
      new RegExp(
        `^\\[✗\\] service: Cannot reach the service at ${stopped.url} \\(ECONNREFUSED\\).*\n` +
          '    fix: check the address \\(--url, FLOWSYNC_URL, or serviceUrl in the config file\\) and that the ' +
          'service runs \\(`flowsync serve` for one on this machine\\)$',
      ),
    );
    expect(unreachable.stdout).toContain('[-] clock: not compared: the service does not answer');

    const refused = await doctor(['--json'], { FLOWSYNC_TOKEN: 'not-a-token-of-this-service' });
    expect(refused.code).toBe(1);
    const service = doctorReportSchema.parse(JSON.parse(refused.stdout)).find((c) => c.check === 'service')!;
    expect(service.verdict).toBe('fail');
    expect(service.message).toMatch(
      new RegExp(`^service: the service at ${user.svc.url} refuses your token \\(from FLOWSYNC_TOKEN\\): `),
    );
    expect(service.message).not.toContain('decrypt_aes_gcm');
    expect(service.fix).toBe('set FLOWSYNC_TOKEN to a token this service gave you');
  });

  it('flags an OS keychain that keeps nothing (locked, or no login keyring) and one that is not there', async () => {
    writeAgentConfig(user.env, [{ path: user.repo.root }]);
    // A D-Bus session of its own, whose gnome-keyring was started without a password: no keyring is unlocked, so
    // reads answer "no secret" as if none were kept and writes fail, as on a desktop whose keyring stayed locked.
    const locked = startProgram(
      'dbus-run-session',
      [
        '--',
        'sh',
        '-c',
        'gnome-keyring-daemon --start --components=secrets >/dev/null && exec "$@"',
        'sh',
      ].concat([process.execPath, FLOWSYNC_BIN, 'doctor']),
      { ...user.env, FLOWSYNC_TOKEN: '' },
    );
    expect(await locked.exitWithin(30_000), locked.output()).toBe(1);
    expect(locked.output()).toMatch(
      /\[✗\] keychain: the OS keychain is locked, or has no login keyring yet \(.+\): it keeps nothing, so a sign-in is lost\n {4}fix: unlock it/,
    );

    const absent = await doctor([], {
      FLOWSYNC_TOKEN: '',
      ...NO_KEYCHAIN,
      DISPLAY: '',
    });
    expect(absent.code).toBe(1);
    expect(lineOf(absent.stdout, '[✗] keychain:')).toMatch(
      /^\[✗\] keychain: no OS keychain answers \(.+\), so no sign-in is kept\n {4}fix: on Linux, run a Secret Service in your session .*; or set FLOWSYNC_TOKEN in the environment$/,
    );
    expect(lineOf(absent.stdout, '[✗] service:')).toBe(
      `[✗] service: no token for ${user.svc.url}: the OS keychain does not answer\n` +
        `    fix: set FLOWSYNC_TOKEN, or fix the keychain and run \`flowsync login --url ${user.svc.url}\``,
    );
    // A token in the environment carries sync without a keychain: a warning, not a failure.
    const carried = await doctor([], {
      ...NO_KEYCHAIN,
      DISPLAY: '',
    });
    expect(carried.stdout).toContain('; FLOWSYNC_TOKEN from the environment is used');
    expect(lineOf(carried.stdout, '[!] keychain:')).not.toContain('set FLOWSYNC_TOKEN');
  });

  it('flags a config file that is not JSON without moving it aside as the agent would', async () => {
    const configPath = join(user.configDir, 'config.json');
    mkdirSync(user.configDir, { recursive: true, mode: 0o700 });
    writeFileSync(configPath, '{"repositories": [', { mode: 0o600 });
    const result = await doctor();
    expect(result.code).toBe(1);
    expect(lineOf(result.stdout, '[✗] config:')).toBe(
      '[✗] config: ~/.config/flowsync/config.json is not valid JSON: the agent sets it aside and starts with no repositories\n' +
        '    fix: fix it, or delete it and add your folders again (`flowsync start <folder>`)',
    );
    expect(readFileSync(configPath, 'utf8')).toBe('{"repositories": [');
  });

  it("flags a checkout that is not its repository's source, and a folder with no flows, each with its fix", async () => {
    // Two checkouts named acme/app: the first one synced is the source; the second is listed, not synced.
    const other = join(user.repo.dir, 'other');
    mkdirSync(join(other, 'flows/a'), { recursive: true });
    writeFileSync(join(other, 'flows/a/x.yaml'), 'x\n');
    const notes = join(user.repo.dir, 'notes');
    mkdirSync(notes);
    writeFileSync(join(notes, 'todo.md'), 'nothing to sync\n');
    const paused = join(user.repo.dir, 'paused');
    mkdirSync(join(paused, 'flows/a'), { recursive: true });
    writeFileSync(join(paused, 'flows/a/x.yaml'), 'x\n');
    const acme = { owner: 'acme', name: 'app' };
    writeAgentConfig(user.env, [
      { path: user.repo.root, ...acme },
      { path: other, ...acme },
      { path: notes },
      { path: paused, enabled: false, pausedAt: '2026-11-25T10:00:00.000Z' },
    ]);
    const synced = await runFlowsync(['sync', user.repo.root], { env: user.env });
    expect(synced.code, synced.stderr).toBe(0);

    const result = await doctor();
    expect(result.code, result.stdout).toBe(4);
    expect(result.stdout).toContain(`[✓] repository: acme/app (${user.repo.root}): 2 flows in flows/`);
    expect(lineOf(result.stdout, `[!] repository: acme/app (${other})`)).toBe(
      `[!] repository: acme/app (${other}) is not synced: acme/app is synced from ${user.repo.root}\n` +
        `    fix: \`flowsync start ${other} --source\` syncs from this checkout instead (${user.repo.root} then stops)`,
    );
    expect(lineOf(result.stdout, '[!] repository: local/notes')).toBe(
      `[!] repository: local/notes (${notes}) has no flows/ folder: nothing to sync\n` +
        "    fix: set its flow folders in the window's Settings (flowRoots in the config file)",
    );
    // Paused by its user: nothing of it is sent, said with how to resume it (issue 25, paused everywhere).
    expect(lineOf(result.stdout, '[!] repository: local/paused')).toMatch(
      new RegExp(
        `^\\[!\\] repository: local/paused \\(${paused}\\) is paused since 2026-11-2\\d \\d\\d:\\d\\d:00: nothing of it is sent\n` +
          ` {4}fix: \`flowsync resume ${paused}\` \\(or Resume in the window\\) when it should sync again$`,
      ),
    );
  });

  it('flags an agent that holds the lock but whose window does not answer, and leaves its lock alone', async () => {
    writeAgentConfig(user.env, [{ path: user.repo.root }]);
    // A live process (this test's) named by a lock whose window address nobody listens on: a stuck agent.
    const closed = await startTestService();
    await closed.close();
    mkdirSync(user.dataDir, { recursive: true, mode: 0o700 });
    const lockPath = join(user.dataDir, 'agent.lock');
    const lock = `${JSON.stringify({
      pid: process.pid,
      command: 'start',
      processStart: null,
      startedAt: '2026-11-25T12:00:00.000Z',
      bridge: `${closed.url}/?token=t`,
      service: null,
      nonce: '0123456789abcdef',
    })}\n`;
    writeFileSync(lockPath, lock, { mode: 0o600 });

    const result = await doctor();
    expect(result.code).toBe(1);
    expect(lineOf(result.stdout, '[✗] agent:')).toBe(
      `[✗] agent: pid ${process.pid} holds the agent lock (since 2026-11-25 12:00:00 UTC) but its window at ` +
        `${closed.url} does not answer: it is stuck\n` +
        `    fix: stop it (kill ${process.pid}) and run \`flowsync start\` (\`flowsync autostart enable\` starts it when you log in)`,
    );
    expect(readFileSync(lockPath, 'utf8')).toBe(lock);
  });

  it('fails the inotify check when sync needs more folders watched than flowsync may watch', async () => {
    writeAgentConfig(user.env, [{ path: user.repo.root }]);
    const result = await doctor([], { FLOWSYNC_MAX_WATCHED_FOLDERS: '2' });
    expect(result.code).toBe(1);
    expect(lineOf(result.stdout, '[✗] inotify watches:')).toBe(
      '[✗] inotify watches: 3 folders to watch, but flowsync watches at most 2 (FLOWSYNC_MAX_WATCHED_FOLDERS): ' +
        'flow roots past that are not watched, and their edits wait for the rescan every 10 minutes instead of going at once\n' +
        '    fix: unset FLOWSYNC_MAX_WATCHED_FOLDERS (it is for tests)',
    );
  });

  it('works with no agent and the embedded service: nothing to reach, no lock taken, no agent started (exit 4)', async () => {
    writeAgentConfig(user.env, [{ path: user.repo.root }]);
    const result = await doctor([], EMBEDDED);
    expect(result.code, result.stdout + result.stderr).toBe(4);
    expect(result.stdout).toContain(
      '[✓] service: the embedded one (no service URL is set); it runs inside the agent, so there is nothing to reach while none runs',
    );
    expect(result.stdout).toContain("[✓] clock: the embedded service runs on this machine's clock");
    expect(result.stdout).toMatch(/\n1 warning \(fixes above\)\.\n$/);
    expect(existsSync(join(user.dataDir, 'agent.lock'))).toBe(false);
    expect(existsSync(join(user.dataDir, 'service.db'))).toBe(false);
  });
});
