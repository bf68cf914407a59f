import { describe, expect, it } from 'vitest';
import {
  newerCleared,
  newerClearedLine,
  type NewerCleared,
  type NoLongerNewer,
} from '../../src/sync/newer-cleared.ts';

/**
 * Why files newer on the service are no longer (issue 47: the terminal said when they came, never when they went):
 * each row the files that were newer, with what the state says of each now, described, and the reason said.
 */
const BASE = 'b'.repeat(64);
const THEIRS = 't'.repeat(64);
const file: NoLongerNewer = { base: BASE, service: THEIRS, acked: THEIRS, conflict: false, taken: false };

const rows: { description: string; files: Partial<NoLongerNewer>[]; why: NewerCleared | null }[] = [
  {
    description: 'taken (`resolve --newer`, the window’s Take them): taken',
    files: [{ taken: true }],
    why: 'taken',
  },
  {
    description:
      'the service’s version is what this checkout acknowledges now, not by a take (a git pull): here',
    files: [{}],
    why: 'here',
  },
  {
    description: 'a deletion there, the file gone here too (a pull that removed it): here',
    files: [{ service: null, acked: null }],
    why: 'here',
  },
  {
    description: 'the service went back to the version this checkout has (the teammate reverted): reverted',
    files: [{ acked: BASE }],
    why: 'reverted',
  },
  {
    description: 'changed here too meanwhile: a conflict now (said as one already), said as the reason',
    files: [{ acked: BASE, conflict: true }],
    why: 'conflict',
  },
  {
    description: 'two files, both taken: taken',
    files: [{ taken: true }, { taken: true }],
    why: 'taken',
  },
  {
    description: 'two files that went different ways (one taken, one reverted): no one reason, none said',
    files: [{ taken: true }, { acked: BASE }],
    why: null,
  },
  {
    description: 'acknowledged as neither side (settled some other way): not known',
    files: [{ acked: 'x'.repeat(64) }],
    why: null,
  },
  { description: 'no file known: not known', files: [], why: null },
];

describe('newerCleared', () => {
  it.each(rows)('$description', ({ files, why }) => {
    expect(newerCleared(files.map((f) => ({ ...file, ...f })))).toBe(why);
  });
});

describe('newerClearedLine', () => {
  it('says that nothing is newer any more, with why when it is known', () => {
    expect(newerClearedLine(null)).toBe('No file is newer on the service any more.');
    expect(newerClearedLine('taken')).toBe('No file is newer on the service any more: taken.');
    expect(newerClearedLine('reverted')).toBe(
      "No file is newer on the service any more: reverted there (the service has this checkout's version again).",
    );
  });
});
