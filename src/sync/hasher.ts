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
  root: string;
  files: string[];
  withContent: boolean;
  /** Workers that died while reading this job (counted for jobs of one file only; see `requeue`). */
  crashes: number;
  resolve: (results: WorkerResult[]) => void;
  reject: (error: Error) => void;
}

export interface HasherOptions {
  /** Sees each job as it is handed to a worker: the supervision tests kill that worker with it. */
  onDispatch?: (worker: Worker, files: readonly string[]) => void;
}

/** Files a message to a worker carries: enough to amortize the hand-off, few enough to spread over workers. */
const FILES_PER_JOB = 32;
/** A file whose reading stopped a worker this many times is reported as unreadable instead of tried forever. */
const CRASH_LIMIT = 2;

/**
 * SHA-256 of files in a pool of worker threads, one per core: hashing a large repository uses every core while
 * the main thread keeps answering the watcher and the network. The pool is supervised: a worker that dies (an
 * uncaught error, terminated) is replaced and its job read again, so no path waits until it changes again.
 */
export class Hasher {
  private readonly size: number;
  private readonly idle: Worker[] = [];
  private readonly busy = new Map<Worker, Job>();
  private readonly queue: Job[] = [];
  private workers = 0;
  private closed = false;

  constructor(
    size = availableParallelism(),
    private readonly options: HasherOptions = {},
  ) {
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
          this.submit({ root, files, withContent, crashes: 0, resolve, reject }),
        ),
      );
    }
    return (await Promise.all(jobs)).flat().map(toHashResult);
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const job of this.queue.splice(0)) job.reject(new Error('the hasher is closed'));
    const all = [...this.idle, ...this.busy.keys()];
    this.idle.length = 0;
    await Promise.all(all.map((worker) => worker.terminate()));
  }

  private submit(job: Job): void {
    if (this.closed) return job.reject(new Error('the hasher is closed'));
    this.queue.push(job);
    this.drain();
  }

  /** Hands queued jobs to idle workers, starting workers up to the pool's size. */
  private drain(): void {
    while (this.queue.length > 0 && !this.closed) {
      const worker = this.idle.pop() ?? this.spawn();
      if (!worker) return;
      const job = this.queue.shift()!;
      this.busy.set(worker, job);
      worker.postMessage({
        root: job.root,
        files: job.files,
        maxBytes: MAX_FILE_BYTES,
        withContent: job.withContent,
      });
      this.options.onDispatch?.(worker, job.files);
    }
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
      this.idle.push(worker);
      job?.resolve(results);
      this.drain();
    });
    // An uncaught error in the worker is followed by its exit, where it is replaced.
    worker.on('error', () => {});
    worker.on('exit', () => {
      this.workers--;
      const index = this.idle.indexOf(worker);
      if (index >= 0) this.idle.splice(index, 1);
      const job = this.busy.get(worker);
      this.busy.delete(worker);
      if (!job) return;
      if (this.closed) return job.reject(new Error('the hasher is closed'));
      this.requeue(job);
      this.drain();
    });
    return worker;
  }

  /**
   * A job whose worker died is read again. Which of its files was at fault is not known, so a job of several
   * files goes back as one job per file; a single file that stops a worker CRASH_LIMIT times is reported as
   * unreadable, so that a file that always crashes the reader cannot keep the pool restarting forever.
   */
  private requeue(job: Job): void {
    if (job.files.length > 1) {
      const parts = job.files.map(
        (file) =>
          new Promise<WorkerResult[]>((resolve, reject) =>
            this.queue.unshift({ ...job, files: [file], crashes: 0, resolve, reject }),
          ),
      );
      Promise.all(parts).then((results) => job.resolve(results.flat()), job.reject);
    } else if (++job.crashes >= CRASH_LIMIT) {
      job.resolve([{ size: 0, hash: '', warning: 'unreadable' }]);
    } else {
      this.queue.unshift(job);
    }
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
