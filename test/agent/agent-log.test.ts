import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  AgentApiError,
  MAX_LOG_BYTES,
  agentLog,
  agentLogPath,
  reportIncident,
  toAgentApiError,
} from '../../src/agent/index.ts';

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
    expect(reportIncident(new Error('second'))).toMatch(/^[0-9a-f]{8}$/);

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
