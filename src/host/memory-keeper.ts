// Node's `performance` global, and node:v8 and node:vm loaded when a collection is first due: every command loads
// this layer, and `flowsync status` never keeps memory (each module a process loads costs its start).
import type { Performance as NodePerformance } from 'node:perf_hooks';

/** The global as Node's: the renderer's type-check reads this file with the DOM's `Performance`, which lacks it. */
const clock = performance as unknown as NodePerformance;

/** How often the keeper looks: a read of the RSS and of the event loop's use, microseconds each. */
const LOOK_MS = 5000;
/** The event loop's busy share over the last look under which the process counts as at rest. */
const AT_REST = 0.05;
/** RSS growth since the last collection that is worth one (a first pass, a burst, a large listing). */
const GREW_BYTES = 24 * 1024 * 1024;

type Collect = () => void;

let collector: Collect | null | undefined;

/**
 * V8's own "give everything back" collection (what it runs on a low-memory notification): every generation
 * collected twice or more, the young generation shrunk, freed pages returned to the OS. Node has no API for it;
 * the `gc` function V8 exposes does it with `flavor: 'last-resort'`. Exposed for this lookup only, then hidden
 * again (nothing else of the process sees a `gc`). Null where it cannot be had (another engine).
 */
function lastResortCollector(): Collect | null {
  if (collector !== undefined) return collector;
  try {
    const exposed = (globalThis as { gc?: unknown }).gc;
    let gc = typeof exposed === 'function' ? exposed : null;
    if (!gc) {
      const { setFlagsFromString } = process.getBuiltinModule('node:v8');
      const { runInNewContext } = process.getBuiltinModule('node:vm');
      setFlagsFromString('--expose-gc');
      gc = runInNewContext('gc') as (options?: unknown) => void;
      setFlagsFromString('--no-expose-gc');
    }
    const call = gc as (options: object) => void;
    collector = () => call({ type: 'major', execution: 'sync', flavor: 'last-resort' });
  } catch {
    collector = null;
  }
  return collector;
}

export interface MemoryKeeper {
  stop(): void;
}

/**
 * Gives a long-running process's memory back once it is at rest after work that grew it. V8 on Node 24 keeps
 * what a busy phase took: old-space garbage is not collected while nothing allocates, the young generation is not
 * shrunk, and freed pages stay pooled, so the agent held its first pass's high-water mark for good (docs/memory.md:
 * after a first pass of 100,000 files, 332 MB of RSS at rest, 156 MB once collected this way). Each LOOK_MS it
 * reads the RSS and the event loop's use; when the RSS grew GREW_BYTES since the last collection and the loop was
 * at rest (AT_REST) over the last look, it collects once, and the RSS after it is the new mark. At rest with
 * nothing growing it never collects again; a collection costs 0.1-0.25 s of CPU, once (docs/memory.md).
 */
export function keepMemoryLow(
  onCollected?: (before: number, after: number, ms: number) => void,
): MemoryKeeper {
  let mark = process.memoryUsage.rss();
  let last = clock.eventLoopUtilization();
  const timer = setInterval(() => {
    const now = clock.eventLoopUtilization();
    const busy = clock.eventLoopUtilization(now, last).utilization;
    last = now;
    const rss = process.memoryUsage.rss();
    if (rss < mark) mark = rss;
    if (busy > AT_REST || rss - mark < GREW_BYTES) return;
    const collect = lastResortCollector();
    if (!collect) return timer.close();
    const start = performance.now();
    collect();
    mark = process.memoryUsage.rss();
    last = clock.eventLoopUtilization();
    onCollected?.(rss, mark, performance.now() - start);
  }, LOOK_MS);
  timer.unref();
  return { stop: () => timer.close() };
}
