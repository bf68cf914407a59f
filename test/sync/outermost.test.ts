import { describe, expect, it } from 'vitest';
import { outermostFolders } from '../../src/sync/outermost.ts';

/**
 * The folders below no other of a list, each once, sorted: what a rescan of new folders, of unreadable ones, and the
 * count of files below what a rescan scanned each take. A name that continues another (`a-b`, `a0`) is not below it.
 */
describe('outermostFolders', () => {
  it.each([
    [[], []],
    [['flows/a'], ['flows/a']],
    [['flows/a/sub', 'flows/a'], ['flows/a']],
    [['flows/a', 'flows/a'], ['flows/a']],
    [
      ['flows/a-b', 'flows/a', 'flows/a0', 'flows/a/x/y'],
      ['flows/a', 'flows/a-b', 'flows/a0'],
    ],
    [
      ['b', 'a/b', 'a'],
      ['a', 'b'],
    ],
  ])('%j → %j', (folders, outermost) => {
    expect(outermostFolders(folders)).toEqual(outermost);
  });
});
