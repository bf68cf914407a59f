import { describe, expect, it } from 'vitest';
import { restoreOutcome, type RestoreFacts } from '../../src/sync/restore-outcome.ts';

describe('what a restored version becomes', () => {
  const rows: [string, RestoreFacts, ReturnType<typeof restoreOutcome>][] = [
    [
      'an old version, the service unchanged since: sent as an edit',
      { base: 'b', service: 'b', restored: 'a' },
      'sent',
    ],
    [
      'the version last synced here, the service changed since: a conflict',
      { base: 'b', service: 's', restored: 'b' },
      'conflict',
    ],
    [
      'an older version, the service changed since: a conflict',
      { base: 'b', service: 's', restored: 'a' },
      'conflict',
    ],
    ["the service's current version: nothing to send", { base: 'b', service: 's', restored: 's' }, 'current'],
    [
      'a deletion, the file deleted on the service: nothing to send',
      { base: 'b', service: null, restored: null },
      'current',
    ],
    [
      'a deletion of a file the service holds as synced here: sent',
      { base: 'b', service: 'b', restored: null },
      'sent',
    ],
    [
      'a file deleted on the service since, restored: a conflict',
      { base: 'b', service: null, restored: 'b' },
      'conflict',
    ],
    [
      'a file never synced here that the service holds: a conflict',
      { base: null, service: 's', restored: 'a' },
      'conflict',
    ],
    [
      'the service did not say what it holds: sent, as before',
      { base: 'b', service: undefined, restored: 'b' },
      'sent',
    ],
  ];
  it.each(rows)('%s', (_, facts, outcome) => expect(restoreOutcome(facts)).toBe(outcome));
});
