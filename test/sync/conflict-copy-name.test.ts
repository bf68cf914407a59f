import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { conflictCopyName, keptCopyNotFound, notSendable } from '../../src/sync/conflict-copy.ts';
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

describe('a copy the service says it kept, read back', () => {
  const sent = { flowPath: 'flows/ci', path: 'build.yml', hash: 'a'.repeat(64) };
  const back = { version: 7, flow_path: 'flows/ci', path: 'build.yml', hash: 'a'.repeat(64) };
  it.each([
    { description: 'the version holds the copy sent: kept', answer: back, refused: null },
    {
      description: 'the version is of another file: not kept',
      answer: { ...back, path: 'deploy.yml' },
      refused: /version 7, which is flows\/ci\/deploy\.yml/,
    },
    {
      description: 'the version is of another flow: not kept',
      answer: { ...back, flow_path: 'flows/cd' },
      refused: /which is flows\/cd\/build\.yml/,
    },
    {
      description: 'the version holds other bytes of the file (an older version): not kept',
      answer: { ...back, hash: 'b'.repeat(64) },
      refused: /holds other bytes \(bbbbbbbbbbbb…\)/,
    },
    {
      description: 'the version is a deletion: not kept',
      answer: { ...back, hash: null },
      refused: /holds other bytes \(a deletion\)/,
    },
  ])('$description', ({ answer, refused }) => {
    const why = keptCopyNotFound(sent, answer);
    if (refused === null) expect(why).toBeNull();
    else expect(why).toMatch(refused);
  });
});

describe('bytes a copy is not sent with, as the scan says it', () => {
  it.each([
    { description: 'text of one name: sent', bytes: Buffer.from('build: 1\n'), links: 1, expected: null },
    { description: 'UTF-8 beyond ASCII: sent', bytes: Buffer.from('name: é ✓\n'), links: 1, expected: null },
    {
      description: 'the same text under two names: a hard link',
      bytes: Buffer.from('key\n'),
      links: 2,
      expected: 'hardlink',
    },
    {
      description: 'one byte over 1 MiB',
      bytes: Buffer.alloc(1024 * 1024 + 1, 0x61),
      links: 1,
      expected: 'oversized',
    },
    { description: 'exactly 1 MiB: sent', bytes: Buffer.alloc(1024 * 1024, 0x61), links: 1, expected: null },
    {
      description: 'a NUL byte in valid UTF-8: binary',
      bytes: Buffer.from('a\u0000b'),
      links: 1,
      expected: 'binary',
    },
    {
      description: 'bytes that are not UTF-8: binary',
      bytes: Buffer.from([0x61, 0xff, 0x62]),
      links: 1,
      expected: 'binary',
    },
  ] as const)('$description', ({ bytes, links, expected }) => {
    expect(notSendable(bytes, links)).toBe(expected);
  });
});
