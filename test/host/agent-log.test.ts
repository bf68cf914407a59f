import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { AgentApiError, toAgentApiError } from '../../src/window/index.ts';
import { MAX_LOG_BYTES, agentLog, agentLogPath, reportIncident } from '../../src/host/index.ts';

const dir = mkdtempSync(join(tmpdir(), 'flowsync-agent-log-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("the agent's log", () => {
  it('is private, rotated by size, and holds each incident under the id the user is shown', () => {
    const path = join(dir, 'agent.log');
    writeFileSync(path, 'x'.repeat(MAX_LOG_BYTES + 1), { mode: 0o644 });
    agentLog(path);
    expect(statSync(`${path}.1`).size).toBe(MAX_LOG_BYTES + 1);
    expect(agentLogPath()).toBe(path);

    const shown = toAgentApiError(new TypeError('cannot read properties of undefined'), 'status');
    expect(shown).toBeInstanceOf(AgentApiError);
    expect(shown.code).toBe('internal');
    const incident = /incident ([0-9a-f]{8})/.exec(shown.message)?.[1];
    expect(shown.message).toContain(path);
    expect(reportIncident(new Error('second')).id).toMatch(/^[0-9a-f]{8}$/);

    const lines = readFileSync(path, 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    const logged = lines.find((line) => line.incident === incident);
    expect(logged.method).toBe('status');
    expect(logged.err.stack).toContain('cannot read properties of undefined');
    expect(statSync(path).mode & 0o777).toBe(0o600);
  });
});

describe('an agent log on a full disk', () => {
  it('never fails what logs to it, and an incident says its error instead of pointing to the log', () => {
    const folder = join(dir, 'full');
    mkdirSync(folder);
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=64k,mode=0700', 'tmpfs', folder]);
    try {
      const path = join(folder, 'agent.log');
      agentLog(path).info('first line');
      try {
        for (let i = 0; ; i++) writeFileSync(join(folder, `filler-${i}`), Buffer.alloc(4096, 1));
      } catch (error) {
        expect((error as NodeJS.ErrnoException).code).toBe('ENOSPC');
      }
      // Lines of a stack's size, more than the last bytes of a block can take.
      expect(() => agentLog().info({ big: 'x'.repeat(8192) }, 'a line the disk refuses')).not.toThrow();
      const shown = toAgentApiError(new TypeError('cannot read properties of undefined'), 'status');
      expect(shown.code).toBe('internal');
      expect(shown.message).toMatch(
        /incident [0-9a-f]{8}\); cannot read properties of undefined \(.*agent\.log could not be written: ENOSPC/,
      );
      expect(shown.message).not.toContain('the details are in');
    } finally {
      // Lazily: this process keeps the log open; the file system goes when it exits.
      execFileSync('umount', ['-l', folder]);
    }
  });
});
