import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import type { FileWarning } from '../protocol/index.ts';

/** Files over this size are not sent (DESIGN.md): the service stores flow definitions, not assets. */
export const MAX_FILE_BYTES = 1024 * 1024;

export type HashResult =
  | { missing: false; size: number; hash: string; warning: FileWarning | null; content: string | null }
  | { missing: true; code: string };

interface WorkerResult {
  size?: number;
  hash?: string;
  warning?: FileWarning;
  content?: string;
  missing?: boolean;
  code?: string;
}

interface Job {
  id: number;
  root: string;
  files: string[];
  withContent: boolean;
  resolve: (results: WorkerResult[]) => void;
  reject: (error: Error) => void;
}

/** Files a message to a worker carries: enough to amortize the hand-off, few enough to spread over workers. */
const FILES_PER_JOB = 32;

/**
 * SHA-256 of files in a pool of worker threads, one per core: hashing a large repository uses every core while
 * the main thread keeps answering the watcher and the network.
 */
export class Hasher {
  private readonly size: number;
  private readonly idle: Worker[] = [];
  private readonly busy = new Map<Worker, Job>();
  private readonly queue: Job[] = [];
  private nextId = 0;
  private workers = 0;
  private closed = false;

  constructor(size = availableParallelism()) {
    this.size = Math.max(1, size);
  }

  /**
   * Hashes files given by path relative to `root` (`/`-separated), read under the containment rule
   * (contained-fs.mjs); with `withContent`, also returns the UTF-8 text of those that are text.
   */
  async hash(root: string, paths: readonly string[], withContent = false): Promise<HashResult[]> {
    const jobs: Promise<WorkerResult[]>[] = [];
    for (let start = 0; start < paths.length; start += FILES_PER_JOB) {
      const files = paths.slice(start, start + FILES_PER_JOB);
      jobs.push(
        new Promise((resolve, reject) =>
          this.submit({ id: this.nextId++, root, files, withContent, resolve, reject }),
        ),
      );
    }
    return (await Promise.all(jobs)).flat().map(toHashResult);
  }

  async close(): Promise<void> {
    this.closed = true;
    const all = [...this.idle, ...this.busy.keys()];
    this.idle.length = 0;
    await Promise.all(all.map((worker) => worker.terminate()));
  }

  private submit(job: Job): void {
    if (this.closed) return job.reject(new Error('the hasher is closed'));
    const worker = this.idle.pop() ?? this.spawn();
    if (!worker) {
      this.queue.push(job);
      return;
    }
    this.busy.set(worker, job);
    worker.postMessage({
      id: job.id,
      root: job.root,
      files: job.files,
      maxBytes: MAX_FILE_BYTES,
      withContent: job.withContent,
    });
  }

  private spawn(): Worker | null {
    if (this.workers >= this.size) return null;
    this.workers++;
    const worker = new Worker(new URL('./hash-worker.mjs', import.meta.url));
    // Idle workers must not keep a finished command alive.
    worker.unref();
    worker.on('message', ({ results }: { results: WorkerResult[] }) => {
      const job = this.busy.get(worker);
      this.busy.delete(worker);
      job?.resolve(results);
      const next = this.queue.shift();
      if (next) {
        this.busy.set(worker, next);
        worker.postMessage({
          id: next.id,
          root: next.root,
          files: next.files,
          maxBytes: MAX_FILE_BYTES,
          withContent: next.withContent,
        });
      } else {
        this.idle.push(worker);
      }
    });
    worker.on('error', (error) => {
      const job = this.busy.get(worker);
      this.busy.delete(worker);
      this.workers--;
      job?.reject(error);
    });
    return worker;
  }
}

function toHashResult(result: WorkerResult): HashResult {
  if (result.missing) return { missing: true, code: result.code ?? 'EIO' };
  return {
    missing: false,
    size: result.size ?? 0,
    hash: result.hash ?? '',
    warning: result.warning ?? null,
    content: result.content ?? null,
  };
}
