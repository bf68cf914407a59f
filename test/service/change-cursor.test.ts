import { describe, expect, it } from 'vitest';
import { changeCursor, readCursor } from '../../src/service/functions/change-cursor.ts';

const NOW = Date.parse('2026-11-27T12:00:00Z');
const DAY = 86_400_000;
const history = { newest: 500, retentionDays: 30 };

describe('readCursor: what the change feed can answer from a caller cursor', () => {
  it.each([
    ['a first call has no cursor: one full look', null, { gap: 'first call' }],
    [
      'a cursor it gave a moment ago goes on from its version',
      changeCursor(420, NOW - 1000),
      { version: 420 },
    ],
    ['the newest version itself: nothing after it yet', changeCursor(500, NOW), { version: 500 }],
    ['version 0 (an empty history then) is a cursor', changeCursor(0, NOW), { version: 0 }],
    ['words are not a cursor', 'latest', { gap: 'not a cursor' }],
    ['a negative version is not one', '-1.1', { gap: 'not a cursor' }],
    ['a cursor with more digits than any version is not one', `${'9'.repeat(16)}.1`, { gap: 'not a cursor' }],
    [
      'past the newest version: another database, or this one restored',
      changeCursor(501, NOW),
      { gap: 'another history' },
    ],
    [
      'given in the future (more than a day): not this clock',
      changeCursor(10, NOW + 2 * DAY),
      { gap: 'another history' },
    ],
    ['28 days old: still covered by 30 days of history', changeCursor(10, NOW - 28 * DAY), { version: 10 }],
    [
      '30 days old: a deletion of then may be pruned',
      changeCursor(10, NOW - 30 * DAY),
      { gap: 'older than the history' },
    ],
  ])('%s', (_rule, after, expected) => {
    expect(readCursor(after, history, NOW)).toEqual(expected);
  });

  it('a cursor is read back as the version it was made of', () => {
    expect(readCursor(changeCursor(123456789, NOW), { newest: 123456789, retentionDays: 30 }, NOW)).toEqual({
      version: 123456789,
    });
  });
});
