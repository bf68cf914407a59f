import { describe, expect, it } from 'vitest';
import { namedFlows, plural } from '../../src/protocol/index.ts';

describe('counts and flows in words', () => {
  it('says a count with its noun, one or many, with thousands separated', () => {
    expect(plural(1, 'flow')).toBe('1 flow');
    expect(plural(6000, 'file')).toBe('6,000 files');
    expect(plural(2, 'repository', 'repositories')).toBe('2 repositories');
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
