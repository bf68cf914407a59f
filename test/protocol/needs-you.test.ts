import { describe, expect, it } from 'vitest';
import { desktopNotifications, followNeeds, type RepositoryNeeds } from '../../src/protocol/index.ts';

/** The desktop notifications the window (a browser's Notification API) and the desktop app (Electron) show. */
const APP = '/home/ada/code/app';
const WEB = '/home/ada/code/web';

function repo(root: string, change: Partial<RepositoryNeeds> & { conflicts?: number } = {}): RepositoryNeeds {
  const { conflicts = 0, ...rest } = change;
  return {
    root,
    owner: 'acme',
    name: root.split('/').at(-1)!,
    phase: 'idle',
    message: null,
    counts: { conflicts },
    heldDeletions: 0,
    notInCheckout: 0,
    ...rest,
  };
}

/** Each status in turn, as the event stream pushes them (followNeeds); the notifications each one brings. */
function run(...statuses: RepositoryNeeds[][]): string[][] {
  const follow = followNeeds();
  return statuses.map((now) => follow(now).map((n) => `${n.title} — ${n.body}`));
}

describe('desktop notifications', () => {
  it('say a conflict once, when it starts, with what to do; never again while it lasts', () => {
    expect(
      run(
        [repo(APP)],
        [repo(APP, { phase: 'syncing' })],
        [repo(APP, { conflicts: 1 })],
        [repo(APP, { conflicts: 2, phase: 'syncing' })],
        [repo(APP, { conflicts: 1 })],
      ),
    ).toEqual([
      [],
      [],
      [
        "acme/app: 1 file in conflict — Changed on the service since this checkout synced: open Waiting for you to keep yours or take the service's.",
      ],
      [],
      [],
    ]);
  });

  it('say it again only after the state ended and came back', () => {
    const shown = run(
      [repo(APP)],
      [repo(APP, { heldDeletions: 40 })],
      [repo(APP)],
      [repo(APP, { heldDeletions: 1 })],
    );
    expect(shown.map((list) => list.length)).toEqual([0, 1, 0, 1]);
    expect(shown[1]).toEqual([
      'acme/app: 40 deletions held — More deleted at once than this repository deletes without asking: open Waiting for you to delete them on the service or restore them.',
    ]);
    expect(shown[3]![0]).toMatch(/^acme\/app: 1 deletion held — /);
  });

  it('not again when a repository with deletions held is paused and resumed, or rescans (its count unknown then)', () => {
    const held = (phase: string) => repo(APP, { phase, heldDeletions: phase === 'idle' ? 40 : 0 });
    const shown = run([repo(APP)], [held('idle')], [held('paused')], [held('scanning')], [held('idle')]);
    expect(shown.map((list) => list.length)).toEqual([0, 1, 0, 0, 0]);
    // Deleted on the service while running: the state ended, and a later one is news.
    expect(
      run([repo(APP)], [held('idle')], [repo(APP)], [held('paused')], [held('idle')]).map((l) => l.length),
    ).toEqual([0, 1, 0, 0, 1]);
  });

  it('never for an ordinary sync, an outage or a pause', () => {
    const quiet = run(
      [repo(APP)],
      [repo(APP, { phase: 'scanning' })],
      [repo(APP, { phase: 'syncing' })],
      [repo(APP, { phase: 'offline', message: 'the service does not answer' })],
      [repo(APP, { phase: 'paused' })],
      [repo(APP, { phase: 'storage', message: 'the data folder is full' })],
      [repo(APP, { phase: 'stopped' })],
      [repo(APP)],
    );
    expect(quiet.flat()).toEqual([]);
  });

  it('nothing for what already waits when the first status arrives (a window opened, the app started)', () => {
    const waiting = [
      repo(APP, { conflicts: 3, heldDeletions: 12 }),
      repo(WEB, { phase: 'missing', message: `${WEB} is gone; syncing resumes when it is back` }),
    ];
    expect(run(waiting, waiting)).toEqual([[], []]);
  });

  it('nothing for what waited in a repository paused when the first status arrived, once it is resumed', () => {
    const waiting = { conflicts: 3, heldDeletions: 40 };
    expect(
      run(
        [repo(APP, { ...waiting, phase: 'paused' })],
        [repo(APP, { ...waiting, phase: 'scanning' })],
        [repo(APP, waiting)],
      ),
    ).toEqual([[], [], []]);
  });

  it('a folder gone is said once, not again after each outage while it stays gone', () => {
    const gone = { phase: 'missing' as const, message: `${APP}/flows is gone` };
    expect(
      run([repo(APP)], [repo(APP, gone)], [repo(APP, { phase: 'offline' })], [repo(APP, gone)]).map(
        (shown) => shown.length,
      ),
    ).toEqual([0, 1, 0, 0]);
  });

  it('one per repository and state: two repositories, two states at once', () => {
    const [, shown] = run(
      [repo(APP), repo(WEB)],
      [repo(APP, { conflicts: 1, heldDeletions: 20 }), repo(WEB, { conflicts: 5 })],
    );
    expect(shown!.map((line) => line.split(' — ')[0])).toEqual([
      'acme/app: 1 file in conflict',
      'acme/app: 20 deletions held',
      'acme/web: 5 files in conflict',
    ]);
    const keys = desktopNotifications(
      [repo(APP), repo(WEB)],
      [repo(APP, { conflicts: 1, heldDeletions: 20 }), repo(WEB, { conflicts: 5 })],
    ).map((n) => [n.key, n.need, n.root, n.repository]);
    expect(keys).toEqual([
      [`conflict ${APP}`, 'conflict', APP, 'acme/app'],
      [`held-deletions ${APP}`, 'held-deletions', APP, 'acme/app'],
      [`conflict ${WEB}`, 'conflict', WEB, 'acme/web'],
    ]);
  });

  it('signed out once for the agent, however many repositories the service refuses', () => {
    const refused = { phase: 'unauthorized', message: 'the service refused the token' };
    expect(
      run(
        [repo(APP), repo(WEB)],
        [repo(APP, refused), repo(WEB)],
        [repo(APP, refused), repo(WEB, refused)],
        [repo(APP, refused), repo(WEB, refused)],
        [repo(APP), repo(WEB)],
      ),
    ).toEqual([
      [],
      [
        'flowsync is signed out — The service refused its token, so nothing is sent: sign in again in Settings, or run flowsync login.',
      ],
      [],
      [],
      [],
    ]);
  });

  it("a folder gone says the engine's line: where it was, and that syncing resumes when it is back", () => {
    const gone = `${APP} is gone; syncing resumes when it is back`;
    expect(run([repo(APP)], [repo(APP, { phase: 'missing', message: gone })])[1]).toEqual([
      `acme/app: its folder is gone — ${gone}`,
    ]);
    // No line from the engine: the same words (folderGone).
    expect(run([repo(APP)], [repo(APP, { phase: 'missing' })])[1]).toEqual([
      `acme/app: its folder is gone — ${gone}`,
    ]);
  });

  it('a repository added since the last status enters the state it is in; one removed and added again too', () => {
    expect(run([repo(APP)], [repo(APP), repo(WEB, { conflicts: 2 })])[1]).toEqual([
      expect.stringMatching(/^acme\/web: 2 files in conflict — /),
    ]);
    expect(
      run([repo(APP, { conflicts: 1 })], [], [repo(APP, { conflicts: 1 })]).map((list) => list.length),
    ).toEqual([0, 0, 1]);
  });
});
