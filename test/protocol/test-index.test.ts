import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * The index of the tests (test/README.md, written by scripts/test-index.mjs) lists every test file: a file added
 * or renamed without `npm run test-index` fails here, naming it.
 */
const TEST = fileURLToPath(new URL('..', import.meta.url));

function testFilesUnder(folder: string): string[] {
  return readdirSync(folder, { withFileTypes: true }).flatMap((entry) => {
    const path = join(folder, entry.name);
    if (entry.isDirectory()) return testFilesUnder(path);
    return entry.name.endsWith('.test.ts') ? [relative(TEST, path)] : [];
  });
}

describe('test/README.md', () => {
  it('lists every test file, with a link to it', () => {
    const index = readFileSync(join(TEST, 'README.md'), 'utf8');
    const listed = new Set([...index.matchAll(/\]\(([^)]+\.test\.ts)\)/g)].map((match) => match[1]));
    const files = testFilesUnder(TEST);
    expect(files.length).toBeGreaterThan(200);
    expect(files.filter((file) => !listed.has(file))).toEqual([]);
    expect([...listed].filter((file) => !files.includes(file!))).toEqual([]);
  });
});
