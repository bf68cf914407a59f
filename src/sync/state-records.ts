/* What the state (state.ts) gives and takes: its records, as the sync layer reads them. */

/** What the agent knows of one file. `localHash` null: gone from disk. `warning` set: on disk but not sent. */
export interface FileRecord {
  flowPath: string;
  path: string;
  size: number | null;
  mtimeMs: number | null;
  localHash: string | null;
  warning: string | null;
  ackedHash: string | null;
  fileId: string | null;
}

/** A file as a window lists it: its hashes, why it is not sent (if so), and whether it is pending or in conflict. */
export interface FileState {
  flowPath: string;
  path: string;
  localHash: string | null;
  warning: string | null;
  ackedHash: string | null;
  pending: boolean;
  conflict: boolean;
  /** Changed on the service only since this checkout last synced it (three-way.ts's 'behind'). */
  behind: boolean;
}

/**
 * A file the service refused to write because its version there is not the one this agent based the write on.
 * `serviceHash` null: the service has no such file (deleted there); `sentHash` null: what was sent is a deletion.
 */
export interface FileConflict {
  flowPath: string;
  path: string;
  baseHash: string | null;
  serviceHash: string | null;
  sentHash: string | null;
  /**
   * What is on disk now (null: nothing), as the state last saw it: what its labels say of "here" (hereSide), never
   * `sentHash`, which an edit made after the difference was recorded does not change.
   */
  diskHash?: string | null;
  /** Who wrote the service's version and when, as the service says (null: it does not know). */
  writtenBy: string | null;
  writtenAt: string | null;
  foundAt: string;
  /**
   * The service no longer has the version this checkout last synced (it went back in time: restored from an older
   * backup, another database): whatever it holds now is no teammate's newer edit, and what is here may be the only
   * copy. A conflict, whose one safe way out is sending this checkout's version again (never "take theirs").
   */
  lost?: boolean;
  /** Raised by its user's own act (a restore over a newer version, a file deleted there before the first round). */
  raised?: boolean;
}

/**
 * What the cache keeps of a file's stat, with the hash it had then. ctime and inode: what a same-size edit with
 * an mtime set back cannot keep (isUnchanged, in the reconciler).
 */
export type CachedStat = Pick<FileRecord, 'size' | 'mtimeMs' | 'localHash'> & {
  ctimeMs: number | null;
  ino: number | null;
};

export interface RepoRecord {
  id: number;
  root: string;
  /** Which service this outbox is for: its URL, or `embedded`. */
  service: string;
  owner: string;
  name: string;
  lastSyncAt: string | null;
  lastError: string | null;
}

export interface RepoCounts {
  flows: number;
  files: number;
  pending: number;
  pendingFlows: number;
  warnings: number;
  rejected: number;
  /** Files in conflict with the service's version: never "in sync" until their user settles them. */
  conflicts: number;
  /** Files changed on the service only (a teammate's edit of a file untouched here): never "in sync" either. */
  behind: number;
}

/** What the service confirmed for one flow: files it now has (with their hash and id) and files it dropped. */
export interface FlowAck {
  flowPath: string;
  stored: { path: string; hash: string; fileId: string | null }[];
  dropped: string[];
}
