import type { KnownFile } from '../../../src/sync/reconcile.ts';
import type { Core, InSyncFacts, PlannedFile } from './core.ts';
import { flowOf } from './service.ts';

/*
 * One checkout of the model: its disk and git, the state its agent keeps (what the state's tables hold: each
 * file's disk hash as last scanned, its base, the recorded differences, what was sent without an answer), what
 * its running agent keeps in memory (the held count, files not in this checkout), and what only the
 * model knows (what this checkout has seen, which deletions were held or confirmed), for the invariants.
 */

/** The repository's files in the model: two flows, one large enough to hold a mass deletion of its own. */
export const FLOWS = ['f1', 'f2'] as const;
export const PATHS = [
  ...['a', 'b', 'c', 'd', 'e', 'f'].map((name) => `f1/${name}`),
  ...['a', 'b', 'c'].map((name) => `f2/${name}`),
];
/** At the start the service (and every checkout) holds all but the last file of each flow. */
export const SEEDED = PATHS.filter((path) => path !== 'f1/f' && path !== 'f2/c');

export type Tree = Map<string, string>;

/** A recorded difference (the state's conflicts table): behind, a conflict, deleted there; lost, raised. */
export interface Row {
  base: string | null;
  service: string | null;
  writtenBy: string | null;
  lost?: boolean;
  raised?: boolean;
}

export class ModelCheckout {
  /** What is on disk: path → hash. */
  disk: Tree;
  /** git: the current branch, its last commit, and the other branches' commits. */
  branch = 'main';
  head: Tree;
  branches = new Map<string, Tree>();

  /** The state: the disk as last scanned (the agent's watcher keeps it up to date while it runs). */
  scanned: Tree;
  /** The state: what the service acknowledged for this checkout (its base), per file. */
  bases: Tree;
  /** The state: what was sent without an answer (null: a deletion), until a look settles it. */
  sent = new Map<string, string | null>();
  /** The state: differences recorded for their user. */
  rows = new Map<string, Row>();
  /** Whether the state learned the service once (a state that knew nothing learns it in its first round). */
  learned = true;

  /** The agent: whether it runs, and what it keeps in memory (lost when it stops). */
  running = true;
  held = 0;
  notInCheckout = new Set<string>();
  /** The service as this checkout last saw it (its last look, and each acknowledgement since). */
  seenService: Tree;

  /** The model's truths: hashes of each file this checkout has had (on disk, sent, or shown as a conflict). */
  seen = new Map<string, Set<string>>();
  /** Deletions held (and not put back or confirmed since), and those its user confirmed (not sent yet). */
  heldSet = new Set<string>();
  confirmed = new Set<string>();
  /** Copies kept beside files (`name.conflict-<time>.ext`): their hashes. */
  beside = new Set<string>();
  /** The state (issue 46): git's change sets held, each file as git left it (null: deleted), until sent or changed. */
  gitHeld = new Map<string, { hash: string | null; name: string }>();
  /**
   * The model's truth: files git put back to this branch's committed version over a teammate's version while the
   * agent watched (path → the committed hash). Never sent unconfirmed; dropped once its user confirms or it changes.
   */
  reverts = new Map<string, string | null>();

  constructor(
    readonly name: string,
    readonly writer: string,
    service: ReadonlyMap<string, string>,
  ) {
    this.disk = new Map(service);
    this.head = new Map(service);
    this.scanned = new Map(service);
    this.bases = new Map(service);
    this.seenService = new Map(service);
    for (const [path, hash] of service) this.see(path, hash);
  }

  see(path: string, hash: string | null): void {
    if (hash === null) return;
    let hashes = this.seen.get(path);
    if (!hashes) {
      hashes = new Set();
      this.seen.set(path, hashes);
    }
    hashes.add(hash);
  }

  hasSeen(path: string, hash: string): boolean {
    return this.seen.get(path)?.has(hash) === true;
  }

  /** Puts a hash on disk (null: removes the file). */
  setDisk(path: string, hash: string | null): void {
    if (hash === null) this.disk.delete(path);
    else {
      this.disk.set(path, hash);
      this.see(path, hash);
    }
  }

  setBase(path: string, hash: string | null): void {
    if (hash === null) this.bases.delete(path);
    else this.bases.set(path, hash);
  }

  /**
   * The files of a flow as the state knows them (on disk as scanned, acknowledged, or both). An acknowledgement
   * may be lost when the flow was sent without an answer, or the state knows nothing acknowledged (rebuilt).
   */
  knownFiles(flow: string): KnownFile[] {
    const paths = [...new Set([...this.scanned.keys(), ...this.bases.keys(), ...this.sent.keys()])];
    // src: what a flow in flight carried (in_flight_files), the evidence of a lost acknowledgement.
    return paths
      .filter((path) => flowOf(path) === flow)
      .sort()
      .map((path) => ({
        path,
        base: this.bases.get(path) ?? null,
        disk: this.scanned.get(path) ?? null,
        ...(this.sent.has(path) ? { sent: this.sent.get(path)! } : {}),
      }));
  }

  /** Whether a file is held as git left it (state-motions.ts's HELD_BY_GIT: its disk still what git left). */
  heldByGit(path: string): boolean {
    const held = this.gitHeld.get(path);
    return held !== undefined && held.hash === (this.scanned.get(path) ?? null);
  }

  plannedFiles(flow: string): PlannedFile[] {
    return this.knownFiles(flow).map((file) => ({
      path: file.path,
      localHash: file.disk,
      ackedHash: file.base,
      recorded: this.rows.has(file.path),
      heldByGit: this.heldByGit(file.path),
    }));
  }

  /** Where a recorded difference stands now (three-way.ts's fileSide over the state's columns). */
  sideOf(core: Core, path: string, row: Row, disk: Tree = this.scanned) {
    return core.fileSide({
      disk: disk.get(path) ?? null,
      base: this.bases.get(path) ?? null,
      service: row.service,
      lost: row.lost === true,
      raised: row.raised === true,
    });
  }

  /** The deletions a round would send: files acknowledged and gone from disk, not recorded (state.deletionCount). */
  deletions(core: Core): string[] {
    return [...this.bases.keys()]
      .filter((path) => !this.rows.has(path) && !this.heldByGit(path))
      .filter((path) =>
        core.isDeletion({
          localHash: this.scanned.get(path) ?? null,
          warning: null,
          ackedHash: this.bases.get(path) ?? null,
        }),
      )
      .sort();
  }

  /**
   * What its status says, from the state (and, while its agent runs, what the agent keeps): with no agent, the
   * counts are the state's as last scanned and nothing of the agent's memory (held, not in checkout) is known.
   */
  statusFacts(core: Core): InSyncFacts {
    const paths = new Set([...this.scanned.keys(), ...this.bases.keys()]);
    let pending = 0;
    for (const path of paths) {
      if (this.rows.has(path) || this.heldByGit(path)) continue;
      const base = this.bases.get(path) ?? null;
      const wanted = core.wantedOnService({
        localHash: this.scanned.get(path) ?? null,
        warning: null,
        ackedHash: base,
      });
      if (wanted !== base) pending++;
    }
    let conflicts = 0;
    let behind = 0;
    for (const [path, row] of this.rows) {
      const side = this.sideOf(core, path, row);
      if (side === 'conflict') conflicts++;
      if (side === 'behind') behind++;
    }
    return {
      counts: { conflicts, pending, behind },
      heldDeletions: this.running ? this.held : 0,
      gitChanges: gitChangeSetsOf(this),
      notInCheckout: this.running ? this.notInCheckout.size : 0,
      paused: false,
      running: this.running,
    };
  }
}

/** The change sets git's held files make up, as the status says them (counted from the state). */
export function gitChangeSetsOf(c: ModelCheckout): { name: string; changed: number; deleted: number }[] {
  const sets = new Map<string, { name: string; changed: number; deleted: number }>();
  for (const [path, { hash, name }] of c.gitHeld) {
    if (!c.heldByGit(path)) continue;
    const set = sets.get(name) ?? { name, changed: 0, deleted: 0 };
    if (hash === null) set.deleted++;
    else set.changed++;
    sets.set(name, set);
  }
  return [...sets.values()];
}

export function sameTree(a: ReadonlyMap<string, string>, b: ReadonlyMap<string, string>): boolean {
  if (a.size !== b.size) return false;
  for (const [path, hash] of a) if (b.get(path) !== hash) return false;
  return true;
}

/** The paths where two trees differ. */
export function differences(a: ReadonlyMap<string, string>, b: ReadonlyMap<string, string>): string[] {
  return [...new Set([...a.keys(), ...b.keys()])].filter((path) => a.get(path) !== b.get(path)).sort();
}
