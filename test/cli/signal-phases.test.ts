import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { REGISTER_TSX } from '../support/cli.ts';

/**
 * A signal that arrives while a command changes what Ctrl-C does. Each case runs in a process of its own, with
 * real signals: the process raises SIGINT against itself at the worst moment, just before the change.
 */
const PHASES = fileURLToPath(new URL('../../src/cli/signal-phases.ts', import.meta.url));

function run(script: string): string {
  const result = spawnSync(
    process.execPath,
    ['--import', REGISTER_TSX, '--input-type=module', '-e', script],
    {
      encoding: 'utf8',
      timeout: 20_000,
    },
  );
  return `${result.stdout}${result.stderr}`.trim();
}

// Ten turns of the event loop, not a time: a signal is in libuv's pipe when kill returns, and a poll reads it.
const AFTER = `let turns = 10; const next = () => (--turns > 0 ? setImmediate(next) : (console.log('lost'), process.exit(1))); setImmediate(next);`;

describe('a signal raised while the phase changes', () => {
  it('is lost when the old listener is removed and a new one added (what start did), so start does not do that', () => {
    const naive = run(`
      const first = () => console.log('first');
      process.once('SIGINT', first);
      process.kill(process.pid, 'SIGINT');
      process.off('SIGINT', first);
      process.once('SIGINT', () => { console.log('second'); process.exit(0); });
      ${AFTER}`);
    expect(naive).toBe('lost');
  });

  it('goes to the phase that is current when it is handled, with SignalPhases', () => {
    const phased = run(`
      const { SignalPhases } = await import(${JSON.stringify(PHASES)});
      const signals = new SignalPhases(() => console.log('first'));
      process.kill(process.pid, 'SIGINT');
      signals.set((signal) => { console.log('second: ' + signal); process.exit(0); });
      ${AFTER}`);
    expect(phased).toBe('second: SIGINT');
  });

  it('keeps handling: a second signal goes to the phase the first one set', () => {
    const twice = run(`
      const { SignalPhases } = await import(${JSON.stringify(PHASES)});
      const signals = new SignalPhases(() => {
        console.log('stopping');
        signals.set(() => { console.log('forced'); process.exit(0); });
        process.kill(process.pid, 'SIGTERM');
      });
      process.kill(process.pid, 'SIGINT');
      ${AFTER}`);
    expect(twice).toBe('stopping\nforced');
  });
});
