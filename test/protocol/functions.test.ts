import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { FUNCTIONS, findFunction, unsafePathReason } from '../../src/protocol/index.ts';

describe('the function table', () => {
  it('has the 20 functions of the spec, in its order, each path once', () => {
    // docs/remote-functions.md is the spec as the owner gave it, kept verbatim in the repository.
    const spec = readFileSync(new URL('../../docs/remote-functions.md', import.meta.url), 'utf8');
    const specPaths = [...spec.matchAll(/^\| (\d+) \| `([^`]+)` \|/gm)].map((m) => [Number(m[1]), m[2]]);
    expect(specPaths).toHaveLength(20);
    expect(FUNCTIONS.map((fn) => [fn.number, fn.path])).toEqual(specPaths);
  });

  it('gives each function a unique client name', () => {
    const names = FUNCTIONS.map((fn) => `${fn.group}.${fn.method}`);
    expect(new Set(names).size).toBe(20);
  });

  it('has exactly the private and wh/ functions as operator-only', () => {
    const PRIVATE = FUNCTIONS.filter((fn) => fn.access === 'admin').map((fn) => fn.path);
    expect(PRIVATE).toHaveLength(8);
    for (const fn of FUNCTIONS) {
      const operatorOnly = fn.path.includes('/private/') || fn.path.startsWith('wh/');
      expect(fn.access === 'admin', fn.path).toBe(operatorOnly);
    }
  });

  it('derives the kind from the path', () => {
    expect(findFunction('svc/flow_def/action/sync_batch/run')).toMatchObject({
      kind: 'action',
      access: 'any',
    });
    expect(findFunction('svc/flow_def/public/update_file')).toMatchObject({ kind: 'public', access: 'any' });
    expect(findFunction('wh/tracker/private/store_webhook')).toMatchObject({
      kind: 'private',
      access: 'admin',
    });
    expect(findFunction('crypto/decrypt_aes_gcm/run')).toMatchObject({ kind: 'action', access: 'any' });
    expect(findFunction('svc/nope')).toBeUndefined();
  });

  it('requires baggage in every function', () => {
    for (const fn of FUNCTIONS) {
      const parsed = fn.args.safeParse({});
      expect(parsed.success).toBe(false);
      expect(
        parsed.error!.issues.some((issue) => issue.path[0] === 'baggage'),
        fn.path,
      ).toBe(true);
    }
  });
});

describe('wire paths', () => {
  it.each(['main.yaml', 'a/b/c.txt', 'flows/my flow/ü.md', '.hidden', 'a..b/c'])('accepts %j', (path) => {
    expect(unsafePathReason(path)).toBeNull();
  });
  it.each([
    ['', 'is empty'],
    ['..', 'has a .. segment'],
    ['a/../b', 'has a .. segment'],
    ['./a', 'has a . segment'],
    ['/abs', 'is absolute'],
    ['c:/win', 'is absolute'],
    ['a\\b', 'contains a backslash (use /)'],
    ['a//b', 'has an empty segment'],
    ['a/', 'has an empty segment'],
    ['a\u0000b', 'contains a NUL byte'],
    ['a\nb', 'contains a control character'],
    ['flows/a/\u001b[31mred', 'contains a control character'],
    ['a\u007fb', 'contains a control character'],
    ['x'.repeat(1025), 'is longer than 1024 characters'],
  ])('refuses %j: %s', (path, reason) => {
    expect(unsafePathReason(path)).toBe(reason);
  });
});
