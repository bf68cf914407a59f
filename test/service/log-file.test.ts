import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { REPEATS_PER_SECOND, openLogFile } from '../../src/host/index.ts';

const dir = mkdtempSync(join(tmpdir(), 'flowsync-log-file-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const lines = (path: string) =>
  readFileSync(path, 'utf8')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as Record<string, unknown>);

describe('a log file', () => {
  it('writes a line repeated 10,000 times in a second a few times, then once with the count', () => {
    const path = join(dir, 'repeats.log');
    let clock = 1_000_000;
    const file = openLogFile(path, { now: () => clock });
    const log = pino({ base: { svc: 'flowsync' }, timestamp: () => `,"time":${clock}` }, file);
    for (let i = 0; i < 10_000; i++) {
      clock += 0.05;
      log.info({ status: 401, ms: Math.random() }, 'call');
    }
    log.warn('something else');
    clock += 1000;
    log.info({ status: 401, ms: 0.1 }, 'call');
    file.end();

    const written = lines(path);
    expect(written.filter((line) => line.msg === 'call')).toHaveLength(REPEATS_PER_SECOND + 1);
    expect(written.find((line) => line.msg === 'something else')?.level).toBe(40);
    const summary = written.find((line) => line.repeated !== undefined);
    expect(summary).toMatchObject({ level: 30, repeated: 10_000 - REPEATS_PER_SECOND });
    expect(summary?.msg).toBe(
      `call (repeated ${(10_000 - REPEATS_PER_SECOND).toLocaleString('en-US')} more times in 1 s)`,
    );
  });

  it('is moved to .1 at its cap while open, and both stay private and under the cap', () => {
    const path = join(dir, 'sized.log');
    writeFileSync(path, '', { mode: 0o644 });
    const file = openLogFile(path, { maxBytes: 4096 });
    const log = pino({}, file);
    // Different lines (a trace id each), so none is summed up: 500 lines of about 100 bytes.
    for (let i = 0; i < 500; i++) log.info({ trace_id: `trace-${i.toString(36)}x` }, 'call');
    file.end();
    for (const written of [path, `${path}.1`]) {
      expect(statSync(written).size).toBeLessThanOrEqual(4096);
      expect(statSync(written).mode & 0o777).toBe(0o600);
    }
    expect(lines(path).at(-1)?.trace_id).toBe(`trace-${(499).toString(36)}x`);
  });
});
