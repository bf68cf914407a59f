import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { userEnv } from '../support/agent-process.ts';
import { FLOWSYNC_BIN, packagesLoadedBy } from '../support/cli.ts';

const home = mkdtempSync(join(tmpdir(), 'flowsync-program-'));
afterAll(() => rmSync(home, { recursive: true, force: true }));

describe('the flowsync command', () => {
  it('answers --version and --help without loading the service, the sync engine, SQLite or the keychain', () => {
    for (const args of [['--version'], ['--help']]) {
      const loaded = packagesLoadedBy(FLOWSYNC_BIN, args, userEnv(home));
      expect(loaded).toContain('commander');
      for (const heavy of ['fastify', 'better-sqlite3', 'keytar', 'undici', 'pino']) {
        expect(loaded).not.toContain(heavy);
      }
    }
  });
});

describe("every command's --help", () => {
  it('says each default once, in words, never also as commander\'s "(default: 0)"', async () => {
    const { spawnSync } = await import('node:child_process');
    const top = spawnSync(process.execPath, [FLOWSYNC_BIN, '--help'], {
      encoding: 'utf8',
      env: userEnv(home),
    });
    const commands = [...top.stdout.matchAll(/^ {2}([a-z]+)\b/gm)]
      .map((m) => m[1]!)
      .filter((c) => c !== 'help');
    expect(commands).toEqual(expect.arrayContaining(['start', 'ui', 'serve', 'sync', 'status']));
    for (const command of commands) {
      const help = spawnSync(process.execPath, [FLOWSYNC_BIN, command, '--help'], {
        encoding: 'utf8',
        env: userEnv(home),
      }).stdout.replace(/\s+/g, ' ');
      expect(help, command).not.toMatch(/\(default: [^)]*\) \(default: /);
    }
  }, 120_000);

  it('wraps each description once, to the terminal: no line cut short where the source broke it', async () => {
    const { spawnSync } = await import('node:child_process');
    // Not a terminal: commander wraps at 80 columns.
    const help = spawnSync(process.execPath, [FLOWSYNC_BIN, 'start', '--help'], {
      encoding: 'utf8',
      env: userEnv(home),
    }).stdout;
    const description = help.split('\n\n')[1]!;
    const lines = description.split('\n');
    // Every line but a paragraph's last fills the width (it was "file), syncs every" then "flow folder (each …").
    for (const line of lines.slice(0, -1)) expect(line.length, description).toBeGreaterThan(60);
    expect(description).toContain('syncs every flow folder');
    // A paragraph break stays one.
    const doctor = spawnSync(process.execPath, [FLOWSYNC_BIN, 'doctor', '--help'], {
      encoding: 'utf8',
      env: userEnv(home),
    }).stdout;
    expect(doctor).toMatch(/takes its\s+lock\.\n\nExit code: 0 when/);
  });
});
