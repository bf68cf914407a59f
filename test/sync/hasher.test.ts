import { createHash } from 'node:crypto';
import type { Worker } from 'node:worker_threads';
import { afterEach, describe, expect, it } from 'vitest';
import { Hasher } from '../../src/sync/index.ts';
import { makeRepo, type TestRepo } from '../support/repo.ts';

/** The hash worker pool under faults: real worker threads, terminated while they hold a job. */
let repo: TestRepo;
let hasher: Hasher | null = null;

afterEach(async () => {
  await hasher?.close();
  hasher = null;
  repo.cleanup();
});

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

function flowOf(count: number): { paths: string[]; contents: string[] } {
  const files: Record<string, string> = {};
  for (let i = 0; i < count; i++) files[`flows/a/file${i}.yaml`] = `file ${i}\n`;
  repo = makeRepo(files);
  return { paths: Object.keys(files), contents: Object.values(files) };
}

describe('a supervised hash worker pool', () => {
  it('replaces a worker that dies holding a job and reads that job again', async () => {
    const { paths, contents } = flowOf(100);
    const killed: Worker[] = [];
    hasher = new Hasher(2, {
      onDispatch: (worker) => {
        if (killed.length === 0) {
          killed.push(worker);
          void worker.terminate();
        }
      },
    });
    const results = await hasher.hash(repo.root, paths, true);
    expect(killed).toHaveLength(1);
    expect(results).toEqual(
      contents.map((content) => ({
        missing: false,
        size: content.length,
        hash: sha256(content),
        warning: null,
        content,
      })),
    );
    // And the pool still works afterwards.
    const [again] = await hasher.hash(repo.root, [paths[7]!]);
    expect(again).toMatchObject({ missing: false, hash: sha256(contents[7]!) });
  });

  it('reports a file that stops the worker every time as unreadable, and reads the rest of its job', async () => {
    const { paths, contents } = flowOf(40);
    const poison = paths[5]!;
    let kills = 0;
    hasher = new Hasher(2, {
      onDispatch: (worker, files) => {
        if (files.includes(poison)) {
          kills++;
          void worker.terminate();
        }
      },
    });
    const results = await hasher.hash(repo.root, paths, true);
    expect(results[5]).toEqual({ missing: false, size: 0, hash: '', warning: 'unreadable', content: null });
    for (const [index, result] of results.entries()) {
      if (index !== 5) expect(result).toMatchObject({ missing: false, content: contents[index] });
    }
    // Once with its job of 32 files, then twice on its own: then it is given up, not retried forever.
    expect(kills).toBe(3);
  });

  it('lets its used workers go when idle, keeps one fresh worker, and reads the next job with it', async () => {
    const { paths, contents } = flowOf(100);
    const used = new Set<Worker>();
    const dispatched: Worker[] = [];
    hasher = new Hasher(2, { idleMs: 50, onDispatch: (worker) => dispatched.push(worker) });
    await hasher.hash(repo.root, paths);
    for (const worker of dispatched) used.add(worker);
    expect(used.size).toBe(2);
    // A used worker's heap is mostly garbage: after the idle time both are gone, one fresh worker is left.
    const deadline = Date.now() + 10_000;
    const retired = () => [...used].every((worker) => worker.threadId === -1);
    while (!(retired() && hasher.runningWorkers === 1) && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 20));
    expect(retired()).toBe(true);
    expect(hasher.runningWorkers).toBe(1);
    dispatched.length = 0;
    const [again] = await hasher.hash(repo.root, [paths[3]!], true);
    expect(again).toMatchObject({ missing: false, content: contents[3] });
    expect(used.has(dispatched[0]!)).toBe(false);
  });
});
