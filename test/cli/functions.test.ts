import { describe, expect, it } from 'vitest';
import { FUNCTIONS } from '../../src/protocol/index.ts';
import { runFlowsync } from '../support/cli.ts';

describe('flowsync functions', () => {
  it('lists the 20 functions with kind and who may call them', async () => {
    const result = await runFlowsync(['functions']);
    expect(result.code).toBe(0);
    const lines = result.stdout.trim().split('\n');
    expect(lines).toHaveLength(21);
    expect(lines[1]).toMatch(
      /^ 1 {2}svc\/swarm_api_key\/private\/add_activity +private +admin +Record activity/,
    );
    expect(result.stdout).toMatch(/svc\/flow_def\/action\/sync_batch\/run +action +any/);
  });

  it('prints JSON with --json', async () => {
    const result = await runFlowsync(['functions', '--json']);
    const list = JSON.parse(result.stdout) as { path: string; access: string }[];
    expect(list.map((fn) => fn.path)).toEqual(FUNCTIONS.map((fn) => fn.path));
  });
});

describe('flowsync usage', () => {
  it('exits 2 with a hint on an unknown command or a bad option', async () => {
    const unknown = await runFlowsync(['nosuch']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain("unknown command 'nosuch'");
    const badPort = await runFlowsync(['serve', '--port', 'abc']);
    expect(badPort.code).toBe(2);
    expect(badPort.stderr).toContain('a port is a whole number');
  });

  it('has --help with an example on every command', { timeout: 120_000 }, async () => {
    const top = await runFlowsync(['--help']);
    expect(top.code).toBe(0);
    const commands = [...top.stdout.matchAll(/^ {2}(\w+)(?: \[options\])?(?: \S+)* {2,}/gm)]
      .map((m) => m[1]!)
      .filter((name) => name !== 'help');
    expect(commands).toEqual([
      'start',
      'sync',
      'conflicts',
      'resolve',
      'history',
      'restore',
      'status',
      'pause',
      'resume',
      'doctor',
      'ui',
      'serve',
      'service',
      'login',
      'whoami',
      'logout',
      'call',
      'functions',
      'autostart',
    ]);
    // All at once: one after the other, 18 processes took the test's whole minute on a loaded machine. Each may
    // take its time: 20 starts at once on two cores under a full suite went past the usual 20 s each.
    const helps = await Promise.all(
      commands.map((command) => runFlowsync([command, '--help'], { timeoutMs: 80_000 })),
    );
    commands.forEach((command, n) => {
      expect(helps[n]!.code, command).toBe(0);
      expect(helps[n]!.stdout, command).toContain('Examples:');
    });
  });
});
