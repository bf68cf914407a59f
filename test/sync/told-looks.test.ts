import { describe, expect, it, vi } from 'vitest';
import { ToldLooks } from '../../src/sync/told-looks.ts';

/** A port whose checks are recorded and finish when the test says so. */
function port(options: { canLook?: () => boolean; fail?: () => boolean } = {}) {
  const looks: Record<string, string | null>[] = [];
  const finishers: (() => void)[] = [];
  return {
    looks,
    finishOne: () => finishers.shift()?.(),
    port: {
      canLook: options.canLook ?? (() => true),
      check: (told: ReadonlyMap<string, string | null>) => {
        looks.push(Object.fromEntries(told));
        return new Promise<void>((resolve, reject) =>
          finishers.push(() => (options.fail?.() ? reject(new Error('offline')) : resolve())),
        );
      },
    },
  };
}

const tick = () => new Promise((resolve) => setTimeout(resolve, 0));

describe('ToldLooks: the looks the live feed asks for', () => {
  it('looks at once at what it is told', async () => {
    const p = port();
    const done = new ToldLooks(p.port).told([['flows/a', 'h1']]);
    await tick();
    expect(p.looks).toEqual([{ 'flows/a': 'h1' }]);
    p.finishOne();
    await done;
  });

  it('gathers what is told during a look into one next look, the newest hash of a flow winning', async () => {
    const p = port();
    const looks = new ToldLooks(p.port);
    const first = looks.told([['flows/a', 'h1']]);
    await tick();
    void looks.told([['flows/b', 'h2']]);
    void looks.told([['flows/a', 'h3']]);
    void looks.told([['flows/c', null]]);
    p.finishOne();
    // The next look waits as long as the first took when that was over 10 ms, which a loaded machine makes it
    // (a tick was not enough: 2 runs of 6 failed under a suite beside them).
    await vi.waitFor(() => expect(p.looks).toHaveLength(2), { timeout: 5000 });
    expect(p.looks).toEqual([{ 'flows/a': 'h1' }, { 'flows/b': 'h2', 'flows/a': 'h3', 'flows/c': null }]);
    p.finishOne();
    await first;
  });

  it('keeps what is told while the engine cannot look, and looks when it rests', async () => {
    let resting = false;
    const p = port({ canLook: () => resting });
    const looks = new ToldLooks(p.port);
    await looks.told([['flows/a', 'h1']]);
    expect(p.looks).toEqual([]);
    expect(looks.pending).toBe(1);
    resting = true;
    looks.resting();
    await tick();
    expect(p.looks).toEqual([{ 'flows/a': 'h1' }]);
    p.finishOne();
  });

  it('keeps a look that failed for the next one, under what was told since', async () => {
    let failing = true;
    const p = port({ fail: () => failing });
    const looks = new ToldLooks(p.port);
    const first = looks.told([
      ['flows/a', 'h1'],
      ['flows/b', 'h2'],
    ]);
    await tick();
    void looks.told([['flows/a', 'h9']]);
    p.finishOne();
    await first;
    expect(looks.pending).toBe(2);
    failing = false;
    looks.resting();
    await tick();
    expect(p.looks.at(-1)).toEqual({ 'flows/a': 'h9', 'flows/b': 'h2' });
    p.finishOne();
  });
});
