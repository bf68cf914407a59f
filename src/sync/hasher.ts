import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { MAX_FILE_BYTES, type FileWarning } from '../protocol/index.ts';

/**
 * The worker's script. In the packaged desktop app the bundle sits inside app.asar, which worker threads cannot
 * read: electron-builder.yml unpacks the worker (and the containment rule it imports) to app.asar.unpacked, and
 * the worker is started from there. Not run here (no Electron binary); a no-op everywhere else.
 */
const WORKER_URL = new URL(
  new URL('./hash-worker.mjs', import.meta.url).href.replace('/app.asar/', '/app.asar.unpacked/'),
);

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
  /** Sees each job just before it is handed to a worker: the supervision tests kill that worker with it. */
  onDispatch?: (worker: Worker, files: readonly string[]) => void;
  /** How long a used worker without a job stays before it exits (IDLE_MS). */
  idleMs?: number;
}

/** Files a message to a worker carries: enough to amortize the hand-off, few enough to spread over workers. */
const FILES_PER_JOB = 32;
/** A file whose reading stopped a worker this many times is reported as unreadable instead of tried forever. */
const CRASH_LIMIT = 2;
/**
 * A worker that did some work and then has nothing to do for this long exits: each holds an isolate of its own,
 * and after hashing 100,000 files its heap is mostly garbage that V8 does not collect in an idle thread (the two
 * workers held about 90 MB of RSS here after the first sync). One fresh worker (about 10 MB) is kept instead, as
 * starting one costs 130 to 180 ms on this machine under load, which an edit after a pause must not pay.
 */
const IDLE_MS = 2000;

/**
 * SHA-256 of files in a pool of worker threads, one per core: hashing a large repository uses every core while
 * the main thread keeps answering the watcher and the network. The pool is supervised: a worker that dies (an
 * uncaught error, terminated) is replaced and its job read again, so no path waits until it changes again.
 * Workers start on demand; used ones exit when idle, leaving one fresh worker (IDLE_MS).
 */
export class Hasher {
  private readonly size: number;
  private readonly idle: Worker[] = [];
  private readonly busy = new Map<Worker, Job>();
  private readonly queue: Job[] = [];
  private readonly idleTimers = new Map<Worker, NodeJS.Timeout>();
  /** Workers that have read at least one job: only these are retired when idle. */
  private readonly used = new WeakSet<Worker>();
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

  /** Workers alive now (started and not yet exited). */
  get runningWorkers(): number {
    return this.workers;
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const timer of this.idleTimers.values()) clearTimeout(timer);
    this.idleTimers.clear();
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
      clearTimeout(this.idleTimers.get(worker));
      this.idleTimers.delete(worker);
      this.used.add(worker);
      const job = this.queue.shift()!;
      this.busy.set(worker, job);
      // Before the job is posted: a test that kills the worker here kills it before it can answer (after, a
      // worker on a loaded machine sometimes answered a one-file job before its terminate took effect).
      this.options.onDispatch?.(worker, job.files);
      worker.postMessage({
        root: job.root,
        files: job.files,
        maxBytes: MAX_FILE_BYTES,
        withContent: job.withContent,
      });
    }
  }

  private spawn(): Worker | null {
    if (this.workers >= this.size) return null;
    this.workers++;
    const worker = new Worker(WORKER_URL);
    // Idle workers must not keep a finished command alive.
    worker.unref();
    worker.on('message', ({ results }: { results: WorkerResult[] }) => {
      const job = this.busy.get(worker);
      this.busy.delete(worker);
      this.idle.push(worker);
      job?.resolve(results);
      this.drain();
      if (this.idle.includes(worker)) this.retireWhenIdle(worker);
    });
    // An uncaught error in the worker is followed by its exit, where it is replaced.
    worker.on('error', () => {});
    worker.on('exit', () => {
      this.workers--;
      clearTimeout(this.idleTimers.get(worker));
      this.idleTimers.delete(worker);
      const index = this.idle.indexOf(worker);
      if (index >= 0) this.idle.splice(index, 1);
      const job = this.busy.get(worker);
      this.busy.delete(worker);
      if (!job) {
        // A retired worker: a fresh one takes the place of the last, and a job queued meanwhile starts now.
        if (this.closed) return;
        if (this.workers === 0 && this.queue.length === 0) {
          const spare = this.spawn();
          if (spare) this.idle.push(spare);
        }
        this.drain();
        return;
      }
      if (this.closed) return job.reject(new Error('the hasher is closed'));
      this.requeue(job);
      this.drain();
    });
    return worker;
  }

  /** Ends a used worker that stays without a job for `idleMs` (IDLE_MS). */
  private retireWhenIdle(worker: Worker): void {
    if (!this.used.has(worker)) return;
    const timer = setTimeout(() => {
      this.idleTimers.delete(worker);
      const index = this.idle.indexOf(worker);
      if (index < 0) return;
      this.idle.splice(index, 1);
      void worker.terminate(); // its exit event counts it out
    }, this.options.idleMs ?? IDLE_MS);
    timer.unref();
    this.idleTimers.set(worker, timer);
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
