import { describe, expect, it } from 'vitest';
import { EXIT, statusExit, type StatusExitFacts } from '../../src/cli/exit-codes.ts';

/**
 * What `flowsync status` exits with (issue 47): a script's `flowsync status && …` read "all good" while a teammate's
 * edit was newer on the service. Each row the repositories of the current service, described, and the code.
 */
const settled: StatusExitFacts = { waiting: false, notReached: false, away: false, behind: 0 };

const rows: { description: string; repos: Partial<StatusExitFacts>[]; code: number }[] = [
  { description: 'no repository at all: nothing to say against success', repos: [], code: EXIT.ok },
  { description: 'every repository in sync after a fresh look: 0', repos: [{}, {}], code: EXIT.ok },
  {
    description: 'files newer on the service and nothing else waiting: its own code, 5',
    repos: [{ behind: 2 }],
    code: EXIT.behind,
  },
  {
    description: 'files newer in one repository, the other in sync: 5',
    repos: [{}, { behind: 1 }],
    code: EXIT.behind,
  },
  {
    description: 'a conflict (or held deletions…) waits for its user: 4, whatever is newer there too',
    repos: [{ waiting: true, behind: 3 }],
    code: EXIT.attention,
  },
  {
    description:
      'something waits in one repository, the look could not be made in another: 4 (known, to act on)',
    repos: [{ waiting: true }, { notReached: true }],
    code: EXIT.attention,
  },
  {
    description: 'the look at the service got no answer now: the transport code, never 0',
    repos: [{ notReached: true }],
    code: EXIT.transport,
  },
  {
    description: 'the agent finds the service offline: the transport code',
    repos: [{ away: true }],
    code: EXIT.transport,
  },
  {
    description:
      'newer files known from the last look, and the look now not reached: 3 (what is newer may be more)',
    repos: [{ behind: 1, notReached: true }],
    code: EXIT.transport,
  },
];

describe('statusExit', () => {
  it.each(rows)('$description', ({ repos, code }) => {
    expect(statusExit(repos.map((repo) => ({ ...settled, ...repo })))).toBe(code);
  });

  it('the codes are distinct, and 5 is new beside 0 and 4', () => {
    expect(new Set(Object.values(EXIT)).size).toBe(Object.values(EXIT).length);
    expect(EXIT.behind).toBe(5);
  });
});
