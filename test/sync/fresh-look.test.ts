import { describe, expect, it } from 'vitest';
import { FRESH_LOOK_MS, needsFreshLook, type LastLook } from '../../src/sync/fresh-look.ts';

/**
 * Whether "in sync" may be said on the last look at the service, or a look is made first (issue 47): each row a
 * last look, described, and whether `status`, the stop line (and whatever asks lookNow) look at the service now.
 */
const NOW = 1_000_000;

const rows: { description: string; last: LastLook; needed: boolean }[] = [
  {
    description: 'never looked (an engine just opened, or every look failed): look',
    last: { at: null, live: false },
    needed: true,
  },
  {
    description: 'the last look 45 s ago (the periodic one): a teammate may have written since: look',
    last: { at: NOW - 45_000, live: false },
    needed: true,
  },
  {
    description:
      'the last look a moment ago (two `status` in a row): fresh enough, the service is asked once',
    last: { at: NOW - 200, live: false },
    needed: false,
  },
  {
    description: 'the last look exactly as old as a fresh one may be: still fresh',
    last: { at: NOW - FRESH_LOOK_MS, live: false },
    needed: false,
  },
  {
    description: 'the last look just older than a fresh one may be: look',
    last: { at: NOW - FRESH_LOOK_MS - 1, live: false },
    needed: true,
  },
  {
    description: 'a last look "in the future" (the clock went back): not trusted, look',
    last: { at: NOW + 60_000, live: false },
    needed: true,
  },
  {
    description: 'the live feed is connected and current: it said everything up to now, no look',
    last: { at: NOW - 45_000, live: true },
    needed: false,
  },
  {
    description: 'the live feed is current and no look was ever made: the feed is the look',
    last: { at: null, live: true },
    needed: false,
  },
];

describe('needsFreshLook', () => {
  it.each(rows)('$description', ({ last, needed }) => {
    expect(needsFreshLook(last, NOW)).toBe(needed);
  });
});
