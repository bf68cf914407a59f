import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { conflictLine } from '../../src/cli/commands/conflicts.ts';
import { rescanLine, stopLine } from '../../src/cli/terminal-lines.ts';
import type { SyncFacts } from '../../src/protocol/index.ts';
import { ProgressDisplay } from '../../src/cli/progress.ts';

/** What `flowsync start` writes on a terminal, as the terminal shows it (issue 42 point 7). */

/**
 * A terminal of 100 columns, enough of one for cli-progress and our lines: carriage return, new line, the cursor
 * saved and restored (ESC 7, ESC 8), moved (CSI n A/B/C/D, CSI n G) and lines cleared (CSI 2K, CSI K). `shown()`
 * is its screen, a string a row.
 */
function terminal(): { stream: NodeJS.WriteStream; shown(): string[] } {
  const stream = Object.assign(new PassThrough(), { isTTY: true, columns: 100, rows: 40 });
  const screen: string[][] = [[]];
  let row = 0;
  let col = 0;
  let saved = { row: 0, col: 0 };
  const line = () => (screen[row] ??= []);
  stream.on('data', (chunk: Buffer) => {
    const text = chunk.toString('utf8');
    for (let i = 0; i < text.length; i++) {
      const c = text[i]!;
      if (c === '\r') col = 0;
      else if (c === '\n') {
        row++;
        col = 0;
        line();
      } else if (c === '\x1b') {
        const next = text[i + 1];
        if (next === '7') saved = { row, col };
        else if (next === '8') ({ row, col } = saved);
        if (next !== '[') {
          i++;
          continue;
        }
        const csi = /^\[([?\d;]*)([A-Za-z])/.exec(text.slice(i + 1))!;
        i += csi[0].length;
        const n = Number(csi[1] || '1');
        if (csi[2] === 'A') row = Math.max(0, row - n);
        else if (csi[2] === 'B') row += n;
        else if (csi[2] === 'C') col += n;
        else if (csi[2] === 'D') col = Math.max(0, col - n);
        else if (csi[2] === 'G') col = n - 1;
        else if (csi[2] === 'K' && csi[1] === '2') screen[row] = [];
        else if (csi[2] === 'K') line().length = Math.min(line().length, col);
      } else line()[col++] = c;
    }
  });
  return {
    stream: stream as unknown as NodeJS.WriteStream,
    shown: () =>
      screen.map((chars) =>
        Array.from(chars, (c) => c ?? ' ')
          .join('')
          .trimEnd(),
      ),
  };
}

describe('a line said while the progress bar is drawn', () => {
  it('goes on a line of its own, and the bar is drawn again below it (it was written onto the bar)', () => {
    const { stream, shown } = terminal();
    const progress = new ProgressDisplay(stream);
    progress.update('acme/app (main): hashing files', 40, 100);
    progress.line('flowsync: you are Ada Lovelace (ada@example.com) in the tracker');
    progress.update('acme/app (main): hashing files', 100, 100);
    progress.stop();
    progress.line('acme/app (main) (/home/ada/app): 1 flow, 100 files, in sync');
    const lines = shown().filter((line) => line.trim() !== '');
    expect(lines).toEqual([
      'flowsync: you are Ada Lovelace (ada@example.com) in the tracker',
      expect.stringMatching(/^acme\/app \(main\): hashing files \[=+\] 100\/100$/),
      'acme/app (main) (/home/ada/app): 1 flow, 100 files, in sync',
    ]);
  });
});

describe('a rescan that found changes', () => {
  it('is said neutrally: a rescan at start picking up a new folder is the normal path, not a bug report', () => {
    expect(rescanLine('acme/app (main)', { files: 100, reason: 'new folder' })).toBe(
      'acme/app (main): rescan (new folder): 100 changed files picked up and sent',
    );
    expect(rescanLine('acme/app (main)', { files: 1, reason: 'periodic' })).toBe(
      'acme/app (main): rescan (periodic): 1 changed file picked up and sent',
    );
    expect(rescanLine('acme/app', { files: 3, reason: 'periodic' })).not.toMatch(/missed/);
  });
});

describe('a conflict as `flowsync conflicts` says it', () => {
  const conflict = {
    flowPath: 'flows/ci',
    path: 'build.yml',
    serviceHash: 'b'.repeat(64),
    writtenBy: 'ada@laptop:~/app',
    writtenAt: null,
    foundAt: '2026-11-26T17:00:00.000Z',
  };
  it('says "you changed it" only of a file this checkout synced and changed since', () => {
    const sides = { sentHash: 'c'.repeat(64), diskHash: 'c'.repeat(64) };
    expect(conflictLine({ ...conflict, ...sides, baseHash: 'a'.repeat(64) })).toBe(
      'changed on the service by ada@laptop:~/app; you changed it',
    );
    // A worktree made the source, on another branch: it never synced the file, and never touched it (issue 42).
    expect(conflictLine({ ...conflict, ...sides, baseHash: null })).toBe(
      'changed on the service by ada@laptop:~/app; another version here (this checkout never synced it)',
    );
  });
  it('says what is on disk now, not what was sent: an edit made while behind is "you changed it" (issue 46)', () => {
    const behindThenEdited = { baseHash: 'a'.repeat(64), sentHash: 'a'.repeat(64), diskHash: 'e'.repeat(64) };
    expect(conflictLine({ ...conflict, ...behindThenEdited })).toBe(
      'changed on the service by ada@laptop:~/app; you changed it',
    );
  });
});

describe('the line at stop', () => {
  const repo = (facts: Partial<SyncFacts> = {}, counts: Partial<SyncFacts['counts']> = {}): SyncFacts => ({
    phase: 'idle',
    paused: false,
    heldDeletions: 0,
    notInCheckout: 0,
    configProblem: null,
    owner: 'acme',
    name: 'app',
    ...facts,
    counts: { pending: 0, conflicts: 0, behind: 0, ...counts },
  });
  const rows: {
    description: string;
    repos: (SyncFacts & { newer?: { writtenBy: string | null }[] })[];
    line: string;
  }[] = [
    {
      description: 'says everything was in sync only when it was',
      repos: [repo()],
      line: 'Stopped; everything was in sync.',
    },
    {
      description: 'says what is pending and when it goes',
      repos: [repo({}, { pending: 2 })],
      line: 'Stopped; 2 files pending, sent at the next start.',
    },
    {
      description: 'says the files newer on the service and what takes them',
      repos: [repo({}, { behind: 1 })],
      line: 'Stopped; your changes are sent; 1 file newer on the service (`flowsync resolve --newer` takes them).',
    },
    {
      description:
        'names who wrote the files newer on the service, as the running agent says them (issue 47: the look at stop)',
      repos: [{ ...repo({}, { behind: 1 }), newer: [{ writtenBy: 'bob@desk:~/app' }] }],
      line:
        'Stopped; your changes are sent; 1 file newer on the service, by bob@desk:~/app: `flowsync resolve --newer` ' +
        'takes them (nothing changed here is touched).',
    },
    {
      description:
        'the look at stop got no answer: in sync only as of the last look, never "everything was in sync"',
      repos: [repo({ notReached: { since: '14:02' } })],
      line: 'Stopped; in sync as of 14:02; the service could not be reached now.',
    },
    {
      description:
        'never says in sync over a conflict (it did: only pending and newer were counted, issue 45)',
      repos: [repo({}, { conflicts: 1 })],
      line: 'Stopped; 1 in conflict.',
    },
    {
      description: 'never says in sync over held deletions',
      repos: [repo({ heldDeletions: 40 })],
      line: 'Stopped; 40 deletions held.',
    },
    {
      description: 'says a paused repository waits for the resume, not the next start',
      repos: [repo({ phase: 'paused', paused: true }, { pending: 1 })],
      line: 'Stopped; acme/app paused, 1 file pending, sent when resumed.',
    },
  ];
  for (const row of rows) it(row.description, () => expect(stopLine(row.repos)).toBe(row.line));
});
