import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { FLOWSYNC_BIN } from '../support/cli.ts';

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
