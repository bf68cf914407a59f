import type { FlowRequest } from './core.ts';

/*
 * The service of the model, in memory, following flowsync's service rules (src/service/store/flows.ts syncFlow):
 * each write and deletion carries its base, and one stale base refuses the whole flow's request as a conflict;
 * every version is kept in the file's history with its writer; a conflict copy (keep_copy) is a version of the
 * history that is never the current one; and it can be put back to an older backup of itself (history included).
 */

/** A version in a file's history: its hash (null: a deletion), who wrote it, and whether it is a conflict copy. */
export interface Version {
  hash: string | null;
  writer: string;
  copy?: true;
}

export interface Current {
  hash: string;
  writer: string;
}

/** A refused file, as the service reports it: what it holds now and who wrote that. */
export interface Refusal {
  path: string;
  base: string | null;
  service: string | null;
  writtenBy: string | null;
}

export type Answer =
  | { taken: true; written: { path: string; hash: string | null; replaced: string | null }[] }
  | { taken: false; refused: Refusal[] };

interface Snapshot {
  files: Map<string, Current>;
  history: Map<string, Version[]>;
}

export class ModelService {
  /** The current version of each file (path: `flow/name`). */
  files = new Map<string, Current>();
  /** Each file's versions, oldest first. */
  history = new Map<string, Version[]>();
  /** Itself after each change: what a restore from an older backup goes back to. */
  private backups: Snapshot[] = [];

  constructor(seed: ReadonlyMap<string, string>) {
    for (const [path, hash] of seed) this.put(path, hash, 'seed');
    this.backup();
  }

  /** One flow's request on bases: all of it, or nothing when one base is stale. */
  write(request: FlowRequest, writer: string): Answer {
    const refused: Refusal[] = [];
    const now = (path: string) => this.files.get(path)?.hash ?? null;
    for (const { path, hash, base } of request.writes)
      if (now(path) !== base && now(path) !== hash) refused.push(this.refusal(path, base));
    // Already gone is what a deletion wanted.
    for (const { path, base } of request.deletes)
      if (now(path) !== null && now(path) !== base) refused.push(this.refusal(path, base));
    if (refused.length > 0) return { taken: false, refused };
    const written: { path: string; hash: string | null; replaced: string | null }[] = [];
    for (const { path, hash } of request.writes) {
      if (now(path) === hash) continue;
      written.push({ path, hash, replaced: now(path) });
      this.put(path, hash, writer);
    }
    for (const { path } of request.deletes) {
      if (now(path) === null) continue;
      written.push({ path, hash: null, replaced: now(path) });
      this.files.delete(path);
      this.versionsOf(path).push({ hash: null, writer });
    }
    if (written.length > 0) this.backup();
    return { taken: true, written };
  }

  /** keep_copy: a checkout's bytes kept as a version of the history, marked as its conflict copy; never current. */
  keepCopy(path: string, hash: string, writer: string): void {
    this.versionsOf(path).push({ hash, writer, copy: true });
    this.backup();
  }

  /** The file's versions newest first, as the service lists them (conflict copies among them). */
  versionsNewestFirst(path: string): Version[] {
    return [...this.versionsOf(path)].reverse();
  }

  /** Whether a hash is anywhere in the file's history (copies included). */
  hasInHistory(path: string, hash: string): boolean {
    return this.versionsOf(path).some((version) => version.hash === hash);
  }

  /** The files of one flow as the service lists them. */
  listed(flow: string): { path: string; hash: string; writtenBy: string; writtenAt: null }[] {
    return [...this.files]
      .filter(([path]) => flowOf(path) === flow)
      .map(([path, file]) => ({ path, hash: file.hash, writtenBy: file.writer, writtenAt: null }));
  }

  /** Put back to a backup `back` changes ago (at least one, at most the oldest kept). Returns whether it changed. */
  restoreBackup(back: number): boolean {
    const index = Math.max(0, this.backups.length - 1 - Math.max(1, back));
    const snapshot = this.backups[index];
    if (snapshot === undefined || index === this.backups.length - 1) return false;
    this.backups = this.backups.slice(0, index + 1);
    this.files = new Map([...snapshot.files].map(([path, file]) => [path, { ...file }]));
    this.history = new Map([...snapshot.history].map(([path, versions]) => [path, [...versions]]));
    return true;
  }

  private refusal(path: string, base: string | null): Refusal {
    const current = this.files.get(path);
    return { path, base, service: current?.hash ?? null, writtenBy: current?.writer ?? null };
  }

  private put(path: string, hash: string, writer: string) {
    this.files.set(path, { hash, writer });
    this.versionsOf(path).push({ hash, writer });
  }

  private versionsOf(path: string): Version[] {
    let versions = this.history.get(path);
    if (!versions) {
      versions = [];
      this.history.set(path, versions);
    }
    return versions;
  }

  private backup() {
    this.backups.push({
      files: new Map([...this.files].map(([path, file]) => [path, { ...file }])),
      history: new Map([...this.history].map(([path, versions]) => [path, [...versions]])),
    });
  }
}

/** `f1/a` → `f1`: the model's paths are one flow folder and one file name. */
export function flowOf(path: string): string {
  return path.slice(0, path.indexOf('/'));
}
