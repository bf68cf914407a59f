import { describe, expect, it } from 'vitest';
import { namedFlows, plural } from '../../src/protocol/index.ts';

describe('counts and flows in words', () => {
  it('says a count with its noun, one or many, with thousands separated', () => {
    expect(plural(1, 'flow')).toBe('1 flow');
    expect(plural(6000, 'file')).toBe('6,000 files');
    expect(plural(2, 'repository', 'repositories')).toBe('2 repositories');
  });

  it("writes a count's thousands as toLocaleString('en') does, for every size and sign (without ICU)", () => {
    const rows: [string, number][] = [
      ['zero', 0],
      ['below a thousand', 999],
      ['a thousand', 1000],
      ['a hundred thousand', 100_000],
      ['a million and one', 1_000_001],
      ['the largest safe integer', Number.MAX_SAFE_INTEGER],
      ['a negative count', -1234],
      ['a fraction (kept to toLocaleString)', 1234.5],
    ];
    for (const [what, count] of rows)
      expect(plural(count, 'file'), what).toBe(`${count.toLocaleString('en')} files`);
  });

  it('names the flows of a round: which ones, never only how many (issue 25)', () => {
    expect(namedFlows(['flows/gen', 'flows/gen'])).toBe('flows/gen');
    expect(namedFlows(['flows/web', 'flows/ci'])).toBe('flows/ci and flows/web');
    expect(namedFlows(['flows/c', 'flows/a', 'flows/b'])).toBe('3 flows (flows/a, flows/b, flows/c)');
    expect(namedFlows(['e', 'd', 'c', 'b', 'a'].map((n) => `flows/${n}`))).toBe(
      '5 flows (flows/a, flows/b, flows/c, …)',
    );
  });
});
