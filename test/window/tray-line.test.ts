import { describe, expect, it } from 'vitest';
import { trayLine, type AgentStatus, type RepositoryView } from '../../src/window/index.ts';

function repository(overrides: Partial<RepositoryView> = {}, counts: Partial<RepositoryView['counts']> = {}) {
  return {
    root: '/home/ada/app',
    owner: 'acme',
    name: 'app',
    flowRoots: ['flows'],
    settings: { owner: null, name: null },
    phase: 'idle',
    message: null,
    paused: false,
    pausedSince: null,
    nothingToSync: null,
    counts: {
      flows: 1,
      files: 3,
      pending: 0,
      pendingFlows: 0,
      warnings: 0,
      rejected: 0,
      conflicts: 0,
      behind: 0,
      ...counts,
    },
    progress: null,
    lastSyncAt: null,
    heldDeletions: 0,
    notInCheckout: 0,
    syncedFrom: null,
    branch: null,
    rename: null,
    warnings: [],
    rejected: [],
    configProblem: null,
    configNotSent: null,
    ...overrides,
  } satisfies RepositoryView;
}

const status = (...repositories: RepositoryView[]): AgentStatus => ({
  serviceUrl: 'http://127.0.0.1:7420',
  embedded: false,
  serviceLimits: null,
  repositories,
});

describe('the tray line', () => {
  it('never says "in sync" while a file is in conflict or deletions are held', () => {
    expect(trayLine(status(repository()))).toBe('flowsync: in sync');
    expect(trayLine(status(repository({}, { conflicts: 2 })))).toBe('flowsync: 2 in conflict');
    expect(trayLine(status(repository({ heldDeletions: 159 }), repository({}, { pending: 3 })))).toBe(
      'flowsync: 159 deletions held',
    );
    expect(trayLine(status(repository({}, { pending: 3 })))).toBe('flowsync: 3 files pending');
    // Files on the service not in this checkout wait too (needsOf): the tray said "in sync" (issue 42).
    expect(trayLine(status(repository({ notInCheckout: 3 })))).toBe('flowsync: 3 files not in this checkout');
    expect(
      trayLine(status(repository({ configProblem: '.flowsync/repo-config.json: unknown field "x"' }))),
    ).toBe('flowsync: repo-config.json not valid');
    // Behind (a teammate's edits of files untouched here) is not a conflict, and not "in sync" either (issue 41).
    expect(trayLine(status(repository({}, { behind: 2 })))).toBe(
      'flowsync: your changes are sent; 2 files newer on the service',
    );
    expect(trayLine(status(repository({ phase: 'offline' }, { conflicts: 1 })))).toBe(
      'flowsync: acme/app offline',
    );
  });

  it('says a repository with none of its flow folders has nothing to sync, not "in sync"', () => {
    const nothing = 'no flows/ folder in ~/notes: nothing to sync; set its flow folders in Settings';
    expect(trayLine(status(repository({ nothingToSync: nothing, name: 'notes' }), repository()))).toBe(
      'flowsync: acme/notes has nothing to sync',
    );
    // A lasting state: what else waits is said first.
    expect(
      trayLine(status(repository({ nothingToSync: nothing, name: 'notes' }), repository({}, { pending: 3 }))),
    ).toBe('flowsync: 3 files pending');
  });

  it('says a paused repository is paused, with what waits for the resume: never "in sync"', () => {
    const paused = { paused: true, pausedSince: '2026-11-25T18:00:00.000Z', phase: 'paused' } as const;
    expect(trayLine(status(repository(paused)))).toBe('flowsync: acme/app paused');
    expect(trayLine(status(repository(paused, { pending: 2 })))).toBe(
      'flowsync: acme/app paused, 2 files pending',
    );
    expect(trayLine(status(repository(paused), repository({ ...paused, name: 'web' })))).toBe(
      'flowsync: 2 repositories paused',
    );
    // Scanning what changed while paused is still paused.
    expect(trayLine(status(repository({ ...paused, phase: 'scanning' }, { pending: 1 })))).toBe(
      'flowsync: acme/app paused, 1 file pending',
    );
  });
});
