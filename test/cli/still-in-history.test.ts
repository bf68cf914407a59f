import { describe, expect, it } from 'vitest';
import { stillInHistory } from '../../src/cli/commands/history.ts';

const v = (hash: string | null, current = false) => ({ hash, current });

describe('how many versions of a deleted file are still in the history (issue 42)', () => {
  it.each([
    ['a file that is there', [v('h2', true), v('h1')], 0],
    ['a file deleted, with two versions of content', [v(null, true), v('h2'), v('h1')], 2],
    ['deleted, restored, deleted again', [v(null, true), v('h1'), v(null), v('h1')], 2],
    ['deleted, its versions purged', [v(null, true)], 0],
    ['no version the service calls current', [v('h1')], 0],
    ['no version at all', [], 0],
  ])('%s: %i', (_what, versions, kept) => {
    expect(stillInHistory(versions)).toBe(kept);
  });
});
