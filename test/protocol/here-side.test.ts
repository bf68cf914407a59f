import { describe, expect, it } from 'vitest';
import { hereSide, type HereSide } from '../../src/protocol/index.ts';

/**
 * What a file in conflict is here, read off the disk now (issue 46): `flowsync conflicts` and the window's "Here"
 * column say it. Each row the disk's hash, the base (last synced here), and what is said.
 */
const ROWS: { description: string; disk: string | null; base: string | null; here: HereSide }[] = [
  {
    description: 'the disk is the base: behind (or that very version restored)',
    disk: 'b',
    base: 'b',
    here: 'unchanged',
  },
  {
    description: 'edited after a teammate’s version came in: changed, though what was last sent is the base',
    disk: 'e',
    base: 'b',
    here: 'changed',
  },
  { description: 'gone from disk, synced before: deleted', disk: null, base: 'b', here: 'deleted' },
  {
    description: 'on disk, never synced from here: another version',
    disk: 'x',
    base: null,
    here: 'never synced',
  },
  {
    description: 'not on disk, never synced: nothing here (said as deleted)',
    disk: null,
    base: null,
    here: 'deleted',
  },
  {
    description: 'on disk but not read (a link, over 1 MiB): not the base, so changed',
    disk: '',
    base: 'b',
    here: 'changed',
  },
];

describe('hereSide', () => {
  it.each(ROWS)('$description', ({ disk, base, here }) => {
    expect(hereSide({ disk, base })).toBe(here);
  });
});
