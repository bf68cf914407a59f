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
