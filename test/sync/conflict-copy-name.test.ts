import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { conflictCopyName } from '../../src/sync/conflict-copy.ts';
import { IgnoreRules } from '../../src/sync/ignore-rules.ts';

const root = mkdtempSync(join(tmpdir(), 'flowsync-copy-name-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('the name of a copy kept beside a file', () => {
  const at = new Date('2026-11-26T17:01:02.345Z');
  it.each([
    ['flows/ci/build.yml', 'flows/ci/build.conflict-20261126T170102Z.yml'],
    ['flows/ci/Makefile', 'flows/ci/Makefile.conflict-20261126T170102Z'],
    ['flows/ci/.env', 'flows/ci/.env.conflict-20261126T170102Z'],
    ['flows/ci/a.b.json', 'flows/ci/a.b.conflict-20261126T170102Z.json'],
  ])('%s → %s, which the agent never syncs', (path, copy) => {
    expect(conflictCopyName(path, at)).toBe(copy);
    // A folder with no .gitignore: the built-in rules alone.
    const rules = new IgnoreRules(root);
    expect(rules.ignores(copy)).toBe(true);
    expect(rules.ignores(path)).toBe(false);
  });
});
