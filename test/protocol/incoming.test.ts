import { describe, expect, it } from 'vitest';
import {
  incomingChange,
  incomingCounts,
  takesSomethingAway,
  type IncomingChange,
} from '../../src/protocol/index.ts';

/**
 * What taking a teammate's newer version does here (issue 46), from the disk and the service: each row described,
 * and whether it counts against the allowance of deletions (it removes or overwrites something here).
 */
const ROWS: {
  description: string;
  disk: string | null;
  service: string | null;
  change: IncomingChange | null;
  away: boolean;
}[] = [
  {
    description: 'deleted on the service, on disk here: deleted here',
    disk: 'a',
    service: null,
    change: 'deleted',
    away: true,
  },
  {
    description: 'changed on the service, on disk here: replaced',
    disk: 'a',
    service: 'b',
    change: 'replaced',
    away: true,
  },
  {
    description: 'on the service, not on disk here: written, nothing lost',
    disk: null,
    service: 'b',
    change: 'written',
    away: false,
  },
  { description: 'on neither: nothing to take', disk: null, service: null, change: null, away: false },
];

describe('incomingChange', () => {
  it.each(ROWS)('$description', ({ disk, service, change, away }) => {
    expect(incomingChange({ disk, service })).toBe(change);
    expect(takesSomethingAway(change)).toBe(away);
  });
  it('says the counts that are not none, deletions first', () => {
    const of = (...changes: IncomingChange[]) => changes.map((change) => ({ change }));
    expect(incomingCounts(of('replaced', 'deleted', 'deleted'))).toBe('2 deleted here, 1 replaced');
    expect(incomingCounts(of('written'))).toBe('1 written');
    expect(incomingCounts([])).toBe('');
  });
});
