import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { FLOWSYNC_BIN, runFlowsync } from '../support/cli.ts';

/**
 * A reader that stops early (`flowsync status --help | head -3`): every command crashed with an uncaught EPIPE
 * and a stack trace on stderr. Here the reading end is closed before the command writes a byte.
 */
function runIntoClosedPipe(args: string[]): Promise<{ code: number | null; stderr: string }> {
  const child = spawn(process.execPath, [FLOWSYNC_BIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout.destroy();
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stderr })));
}

describe('output into a pipe whose reader is gone', () => {
  it.each(['--help', 'status --help', 'functions --json'])(
    'flowsync %s ends quietly: no stack, no error',
    async (command) => {
      const result = await runIntoClosedPipe(command.split(' '));
      expect(result.stderr).toBe('');
      expect(result.code).toBe(0);
    },
  );
});

describe('input the command never reads', () => {
  // The tests' own runner (support/cli.ts) writes stdin to every command. One that refuses its arguments exits
  // without reading it, and from the build it exits within 0.1 s: the write then meets a closed pipe (EPIPE), an
  // uncaught error that failed a whole run once in five. 1 MiB, more than a pipe holds, makes it happen every time.
  it('is no error: the command answers as it would without it', async () => {
    const result = await runFlowsync(['stat'], { stdin: 'x'.repeat(1024 * 1024) });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('unknown command');
  });
});
