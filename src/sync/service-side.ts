import { lstatSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { askCapabilities, type RemoteClient } from '../client/index.ts';
import {
  MAX_FILE_BYTES,
  incomingChange,
  takesSomethingAway,
  type FileVersion,
  type HistoryPurge,
  type IncomingChange,
} from '../protocol/index.ts';
import { notRealFolder, readContained } from './contained-fs.mjs';
import { NotWritten, replaceContained } from './contained-write.ts';
import { keepLocalBytes, type CopyKeeper, type KeptCopy } from './conflict-copy.ts';
import type { ServicePort } from './service-port.ts';
import { isNotInCheckout, writerShown } from './reconcile.ts';
import type { ServiceRound } from './service-round.ts';
import { behindLine, wentBackLine } from './engine-status.ts';
import { newerCleared, type NewerCleared } from './newer-cleared.ts';
import {
  conflictSides,
  fileVersions,
  historyNotes,
  purgeHistory,
  sideDiff,
  versionText,
  versionToShow,
  type SideDiff,
} from './file-history.ts';
import type { FlowLayout } from './flow-layout.ts';
import type { IgnoreRules } from './ignore-rules.ts';
import type { RootGuard } from './root-guard.ts';
import { checkServiceFile } from './service-answers.ts';
import { DEFAULT_DELETION_GUARD, deletionVerdict, takeAsks } from './safety.ts';
import { restoreOutcome, type RestoreOutcome } from './restore-outcome.ts';
import {
  listServiceFiles,
  readServiceFiles,
  serviceFileKey,
  type ListedServiceFile,
  type ServiceRepository,
} from './service-copy.ts';
import type { SyncState } from './state.ts';
import type { FileConflict } from './state-records.ts';

/*
 * What the engine asks of the service and writes of its copy to disk (Mutagen's controller keeps the loop, its
 * endpoints the I/O): the check of the service, learning a listing, answering for a flow sent without an answer,
 * conflicts settled either way, files not in this checkout, held deletions put back, a file's history, a version
 * restored, two sides compared. The window and the CLI reach it as `engine.service`. It reaches the engine only
 * through its port: the engine's queue, and the status the engine shows.
 */

/** A conflict as two diffs from the version last synced here (engine.compare). */
export interface ConflictComparison {
  toService: SideDiff;
  toDisk: SideDiff;
}

export type { ServicePort } from './service-port.ts';

export class ServiceSide {
  private readonly options: { state: SyncState; client: RemoteClient };
  private readonly repoId: number;
  private readonly repo: ServicePort['repo'];
  private readonly layout: FlowLayout;
  private readonly guard: RootGuard;
  private readonly rules: IgnoreRules;
  /** The files the last take wrote, each with the service version taken: "no file is newer any more: taken". */
  private lastTaken = new Map<string, string | null>();
  constructor(
    private readonly port: ServicePort,
    /** The round's negotiation with the service: whether it takes bases, the count of files not here. */
    private readonly round: ServiceRound,
  ) {
    this.options = { state: port.state, client: port.client };
    this.repoId = port.repoId;
    this.repo = port.repo;
    this.layout = port.layout;
    this.guard = port.guard;
    this.rules = port.rules;
  }

  /**
   * Settles conflicts (all of them when `which` is null). `mine`: what is on disk is sent on top of the service's
   * version (its hash becomes the base), in the round that follows. `theirs`: the service's version is written to
   * disk (by the containment rule: atomically, never through a link) or, when the service has none, the file is
   * removed; nothing is sent. Returns the files settled (a file named that is not in conflict is not among them),
   * and those that could not be written, each with why: they stay in conflict, and the others are settled.
   */
  async resolve(
    which: readonly { flowPath: string; path: string }[] | null,
    side: 'mine' | 'theirs',
  ): Promise<{
    resolved: { flowPath: string; path: string }[];
    notWritten: NotWrittenFile[];
    kept: KeptFile[];
  }> {
    const { state, client } = this.options;
    const kept: KeptFile[] = [];
    const named = which === null ? null : new Set(which.map((f) => serviceFileKey(f.flowPath, f.path)));
    const conflicts = state
      .conflicts(this.repoId)
      .filter((c) => named === null || named.has(serviceFileKey(c.flowPath, c.path)));
    const notWritten: NotWrittenFile[] = [];
    if (conflicts.length === 0) return { resolved: [], notWritten, kept };
    let resolved: typeof conflicts = conflicts;
    if (side === 'mine') {
      await this.port.scheduler.run(async () => {
        for (const c of conflicts) state.settleConflict(this.repoId, c.flowPath, c.path, c.serviceHash);
      });
    } else {
      const copies = await readServiceFiles(client, this.serviceRepo, conflicts);
      const keeper = await this.copyKeeper();
      resolved = [];
      await this.port.scheduler.run(async () => {
        for (const c of conflicts) {
          const key = serviceFileKey(c.flowPath, c.path);
          const copy = copies.found.get(key) ?? null;
          const unwritable = copies.unwritable.get(key)?.why ?? null;
          const why =
            unwritable ??
            // A lost base is in no history (the service went back in time): bytes equal to it are the only copy,
            // kept like any edit (the team model: "take theirs" on a lost conflict replaced them without one).
            (await this.keepThenPut(keeper, c.flowPath, c.path, c.lost ? null : c.baseHash, copy, kept));
          if (why !== null) {
            notWritten.push({ flowPath: c.flowPath, path: c.path, reason: why });
            continue;
          }
          state.settleConflict(this.repoId, c.flowPath, c.path, copy?.hash ?? null);
          resolved.push(c);
        }
      });
    }
    this.port.scheduler.want();
    this.port.refresh();
    return { resolved: resolved.map(({ flowPath, path }) => ({ flowPath, path })), notWritten, kept };
  }

  /** How this checkout's bytes are kept before the service's are written over them (conflict-copy.ts). */
  private async copyKeeper(): Promise<CopyKeeper> {
    const { client } = this.options;
    const { conflict_copies: inHistory } = await askCapabilities(client);
    return { ...this.repo, client, inHistory: inHistory === true };
  }

  /**
   * The service's copy written to disk (putOnDisk), once what is there, when it is an edit not sent, is kept (in
   * the service's history or beside the file: `kept` says where). Returns why the file was not written, or null.
   */
  private async keepThenPut(
    keeper: CopyKeeper,
    flowPath: string,
    path: string,
    baseHash: string | null,
    copy: { hash: string; content: string } | null,
    kept: KeptFile[],
  ): Promise<string | null> {
    try {
      const where = await keepLocalBytes(keeper, flowPath, path, {
        baseHash,
        serviceHash: copy?.hash ?? null,
      });
      if (where !== null) kept.push({ flowPath, path, ...where });
    } catch (error) {
      if (error instanceof NotWritten) return error.why;
      // The service did not take the copy (not reached, refused): nothing is written over what it would keep.
      return `your version could not be kept first (${(error as Error).message}): not replaced`;
    }
    return this.putOnDisk(flowPath, path, copy);
  }

  /** The files newer on the service and untouched here (three-way.ts's 'behind'), as the last check found them. */
  newer(): FileConflict[] {
    return this.options.state.behind(this.repoId);
  }

  /** The line that says the service went back in time (wentBackLine), or null while no conflict is of that kind. */
  wentBackLine(): string | null {
    return wentBackLine(this.options.state.conflicts(this.repoId).filter((c) => c.lost).length);
  }

  /**
   * Why these files, newer on the service when `was` was read (newer()), are no longer (newer-cleared.ts): taken,
   * the service's version here now, reverted there, a conflict; null when they went different ways or it is not known.
   */
  noLongerNewer(was: readonly FileConflict[]): NewerCleared | null {
    const { state } = this.options;
    const conflicts = new Set(state.conflicts(this.repoId).map((c) => serviceFileKey(c.flowPath, c.path)));
    const acked = new Map<string, string | null>();
    for (const flowPath of new Set(was.map((file) => file.flowPath)))
      for (const file of state.filesOfFlow(this.repoId, flowPath))
        acked.set(serviceFileKey(flowPath, file.path), file.ackedHash);
    return newerCleared(
      was.map((file) => {
        const key = serviceFileKey(file.flowPath, file.path);
        return {
          base: file.baseHash,
          service: file.serviceHash,
          acked: acked.get(key) ?? null,
          conflict: conflicts.has(key),
          taken: this.lastTaken.has(key) && this.lastTaken.get(key) === file.serviceHash,
        };
      }),
    );
  }

  /** The line that says which files are newer on the service (behindLine), or null when none is. */
  newerLine(): string | null {
    return behindLine(this.options.state.behind(this.repoId));
  }

  /**
   * "Take them": writes to disk the service's copy of the files newer there and untouched here (three-way.ts's
   * 'behind'), by the containment rule, each recorded as in sync. Safe because nothing here changes: each file's
   * bytes on disk are read again just before, and one that is not what this checkout last synced any more (edited
   * since the last scan) is not written, and said (it is a conflict now). A take that deletes or overwrites more
   * files here than this repository's deletion guard lets through asks first (one click must not delete 217
   * files of a checkout): nothing is taken, and `asked` lists what would be, until its user confirms that list
   * (`confirmed`, with `seen`: only those files, on the service versions listed; one changed there since is not
   * taken, and said). Returns the files taken (what each did here) and those not.
   */
  async takeNewer(
    options: { confirmed?: boolean; seen?: readonly SeenNewer[] } = {},
  ): Promise<{ taken: TakenFile[]; notWritten: NotWrittenFile[]; asked: NewerFile[] }> {
    const { state, client } = this.options;
    const seen =
      options.seen === undefined
        ? null
        : new Map(options.seen.map((file) => [serviceFileKey(file.flowPath, file.path), file.serviceHash]));
    const newer = state
      .behind(this.repoId)
      .filter((file) => seen === null || seen.has(serviceFileKey(file.flowPath, file.path)))
      .flatMap((file) => {
        const change = incomingChange({ disk: file.diskHash ?? null, service: file.serviceHash });
        return change === null ? [] : [{ ...file, change }];
      });
    const notWritten: NotWrittenFile[] = [];
    const taken: TakenFile[] = [];
    if (newer.length === 0) return { taken, notWritten, asked: [] };
    const asks = takeAsks({
      takesAway: newer.filter((file) => takesSomethingAway(file.change)).length,
      acknowledged: state.acknowledgedCount(this.repoId),
      guard: this.repo.deletionGuard === undefined ? DEFAULT_DELETION_GUARD : this.repo.deletionGuard,
      confirmed: options.confirmed === true,
    });
    if (asks) return { taken, notWritten, asked: newer.map(newerFile) };
    const copies = await readServiceFiles(client, this.serviceRepo, newer);
    await this.port.scheduler.run(async () => {
      const still = new Map(state.behind(this.repoId).map((b) => [serviceFileKey(b.flowPath, b.path), b]));
      for (const file of newer) {
        const { flowPath, path } = file;
        const key = serviceFileKey(flowPath, path);
        const now = still.get(key);
        if (!now) continue; // cleared meanwhile (a round, a pull)
        const copy = copies.found.get(key) ?? null;
        // The service's version listed now, not the one the check saw: a later write there is what is taken, unless
        // its user confirmed a list: then only the version listed to them.
        const why =
          copies.unwritable.get(key)?.why ??
          (seen !== null && (copy?.hash ?? null) !== (seen.get(key) ?? null)
            ? 'changed on the service since it was listed: not taken (take them again to see it)'
            : diskHash(this.repo.root, `${flowPath}/${path}`) !== now.baseHash
              ? 'changed here since it was last looked at: a conflict now, not taken'
              : this.putOnDisk(flowPath, path, copy));
        if (why !== null) {
          notWritten.push({ flowPath, path, reason: why });
          continue;
        }
        state.settleConflict(this.repoId, flowPath, path, copy?.hash ?? null);
        taken.push({ flowPath, path, change: file.change });
      }
    });
    // Before the status that says they are no longer newer: its listeners ask why (noLongerNewer).
    this.lastTaken = new Map(
      taken.map(({ flowPath, path }) => [
        serviceFileKey(flowPath, path),
        copies.found.get(serviceFileKey(flowPath, path))?.hash ?? null,
      ]),
    );
    this.port.scheduler.want();
    this.port.refresh();
    return { taken, notWritten, asked: [] };
  }

  /**
   * Puts back on disk, from the service's copy, the files whose deletion is held (or all files gone from disk that
   * the service has): "Restore them on disk", `flowsync resolve --held --theirs`. Returns how many were written,
   * and those that could not be, each with why (their deletion stays held).
   */
  async restoreDeleted(): Promise<{ restored: number; notWritten: NotWrittenFile[]; kept: KeptFile[] }> {
    const { state, client } = this.options;
    const gone = state.goneAcknowledged(this.repoId);
    const notWritten: NotWrittenFile[] = [];
    const kept: KeptFile[] = [];
    if (gone.length === 0) return { restored: 0, notWritten, kept };
    const copies = await readServiceFiles(client, this.serviceRepo, gone);
    const keeper = await this.copyKeeper();
    let restored = 0;
    await this.port.scheduler.run(async () => {
      for (const file of gone) {
        const key = serviceFileKey(file.flowPath, file.path);
        const unwritable = copies.unwritable.get(key);
        const copy = copies.found.get(key);
        if (!copy && !unwritable) continue; // gone on the service too: nothing to put back, no deletion to send
        // A file written at that name since its deletion was held is its user's: kept before it is replaced.
        const why =
          unwritable?.why ??
          (await this.keepThenPut(keeper, file.flowPath, file.path, file.ackedHash, copy!, kept));
        if (why !== null) {
          notWritten.push({ flowPath: file.flowPath, path: file.path, reason: why });
          continue;
        }
        state.settleConflict(this.repoId, file.flowPath, file.path, copy!.hash);
        restored++;
      }
    });
    if (notWritten.length === 0) this.port.clearHeld();
    this.port.scheduler.want();
    this.port.refresh();
    return { restored, notWritten, kept };
  }

  /**
   * The files on the service that this checkout never had: not on disk here, never acknowledged by it, not in
   * conflict (a file gone here that it acknowledged is a deletion, held or sent by the usual rules), and under a
   * flow root that is there. A fresh state (CI, a rebuilt state) counts them when it learns the service
   * (learnService); this lists them now, for its user to delete them on the service or write them to disk. Empty
   * against a service that cannot list its files.
   */
  async filesNotInCheckout(): Promise<ListedServiceFile[]> {
    const { state, client } = this.options;
    if (!(await this.round.takesBases())) return [];
    const listed = await listServiceFiles(client, this.serviceRepo, null);
    // reconcile.ts's one definition, less the files whose difference is recorded already (named there).
    const known = new Set<string>();
    for (const file of state.fileStates(this.repoId))
      if (!isNotInCheckout({ path: file.path, base: file.ackedHash, disk: file.localHash }) || file.conflict)
        known.add(serviceFileKey(file.flowPath, file.path));
    for (const c of state.conflicts(this.repoId)) known.add(serviceFileKey(c.flowPath, c.path));
    // Under a flow root that is held (emptied, another drive) or not there at all (a drive not mounted, a sparse
    // checkout), the disk says nothing: none of its files is offered to delete, nor written where the root is not.
    this.guard.checkAll();
    const absentRoots = this.layout.roots.filter((root) => notRealFolder(this.repo.root, root) !== null);
    const files = listed.filter(
      (file) =>
        !known.has(serviceFileKey(file.flowPath, file.path)) &&
        !this.guard.holds(file.flowPath) &&
        !absentRoots.some((root) => file.flowPath.startsWith(`${root}/`)),
    );
    this.round.notInCheckout = files.length;
    return files;
  }

  /**
   * Deletes on the service the files this checkout never had ("Delete them on the service", `flowsync resolve
   * --not-in-checkout --mine`): each is taken as acknowledged at the hash the service listed and gone here, so the
   * next round sends it as any deletion, an explicit path on that base (a file changed there since is a conflict,
   * not deleted), confirmed as held deletions are (`sendHeldDeletions`). `seen`: only these files, on the versions
   * its user saw listed (one written there since is not deleted: its base differs, a conflict; one added since is
   * not among them). Returns how many the service took.
   */
  async deleteNotInCheckout(seen: readonly SeenFile[], confirmed = false): Promise<number> {
    const { state } = this.options;
    const listed = onlySeen(await this.filesNotInCheckout(), seen);
    if (listed.length === 0) return 0;
    // The deletion guard, as for any round's deletions (one click must not delete 151 unnamed files): more than
    // it lets through go only on its user's word about this very list.
    const verdict = deletionVerdict({
      waiting: listed.length,
      acknowledged: state.acknowledgedCount(this.repoId) + listed.length,
      confirmed: confirmed ? listed.length : 0,
      held: 0,
      guard: this.repo.deletionGuard === undefined ? DEFAULT_DELETION_GUARD : this.repo.deletionGuard,
      watching: false,
      seen: null,
      now: Date.now(),
    });
    if (verdict.verdict === 'hold') throw new DeletionsNotConfirmed(listed.length);
    // Those taken: a file that is on disk now (written since the listing) is not, and goes by the usual rules.
    let files: ListedServiceFile[] = [];
    await this.port.scheduler.run(async () => {
      state.adoptServiceFiles(this.repoId, listed);
      const gone = new Set(
        state.goneAcknowledged(this.repoId).map((file) => serviceFileKey(file.flowPath, file.path)),
      );
      files = listed.filter((file) => gone.has(serviceFileKey(file.flowPath, file.path)));
    });
    // On its user's word (as held deletions): a conflict refuses its flow whole, and its other files go after.
    const gone = await this.port.sendDeletions(files);
    this.round.notInCheckout -= gone;
    return gone;
  }

  /**
   * Writes to disk, from the service's copy, the files this checkout never had ("Restore them on disk", `flowsync
   * resolve --not-in-checkout --theirs`), as `restoreDeleted` does: by the containment rule, and recorded as in
   * sync at once. Never over anything on disk (a file of that name that appeared since is its user's), and not a
   * file this checkout would not sync (outside its flow roots, or ignored here): those are listed with why.
   * `seen`: only these files (the service's version now is written, whichever its user saw).
   */
  async restoreNotInCheckout(seen?: readonly SeenFile[]): Promise<{
    restored: number;
    skipped: { flowPath: string; path: string; reason: string }[];
  }> {
    const { state, client } = this.options;
    const all = await this.filesNotInCheckout();
    const files = onlySeen(all, seen);
    const skipped: { flowPath: string; path: string; reason: string }[] = [];
    const wanted = files.filter((file) => {
      const repoPath = `${file.flowPath}/${file.path}`;
      const reason =
        this.layout.locate(repoPath)?.flowPath !== file.flowPath
          ? `not under this checkout's flow roots (${this.layout.roots.join(', ')})`
          : this.rules.ignores(repoPath)
            ? 'ignored here (.gitignore): it would not be synced'
            : repoPath.split('/').at(-1) === '.gitignore'
              ? // What this checkout sends is decided by its own .gitignore files (git brings them), never a service's.
                '.gitignore is never written from a service: it decides what this checkout sends'
              : null;
      if (reason !== null) skipped.push({ flowPath: file.flowPath, path: file.path, reason });
      return reason === null;
    });
    if (wanted.length === 0) return { restored: 0, skipped };
    const copies = await readServiceFiles(client, this.serviceRepo, wanted);
    let restored = 0;
    await this.port.scheduler.run(async () => {
      for (const file of wanted) {
        const { flowPath, path } = file;
        const key = serviceFileKey(flowPath, path);
        const unwritable = copies.unwritable.get(key);
        if (unwritable) {
          skipped.push({ flowPath, path, reason: unwritable.why });
          continue;
        }
        const copy = copies.found.get(key);
        if (!copy) {
          skipped.push({ flowPath, path, reason: 'gone from the service meanwhile' });
          continue;
        }
        if (somethingAt(join(this.repo.root, flowPath, path))) {
          skipped.push({ flowPath, path, reason: 'something of that name is on disk now: not overwritten' });
          continue;
        }
        const why = this.putOnDisk(flowPath, path, copy);
        if (why !== null) {
          skipped.push({ flowPath, path, reason: why });
          continue;
        }
        state.adoptServiceFiles(this.repoId, [{ ...file, hash: copy.hash }]);
        restored++;
      }
    });
    this.round.notInCheckout = all.length - restored;
    this.port.scheduler.want();
    return { restored, skipped };
  }

  /** What a file's history says besides its versions: purges, and the size cap's last cut (file-history.ts). */
  historyNotes(
    flowPath: string,
    path: string,
  ): Promise<{ purges: HistoryPurge[]; capped: { at: string; capBytes: number } | null }> {
    return historyNotes(this.options.client, this.repo, flowPath, path);
  }

  /** Every version the service keeps of a file (newest first), deleted ones included: `flowsync history`. */
  async history(flowPath: string, path: string): Promise<FileVersion[]> {
    return fileVersions(this.options.client, this.repo, flowPath, path);
  }

  /** An operator's purge of a file's past versions, all or one (`flowsync history purge`; file-history.ts). */
  purgeHistory(flowPath: string, path: string, version?: number): Promise<HistoryPurge> {
    return purgeHistory(this.options.client, this.repo, flowPath, path, version);
  }

  /**
   * One version's content for a page (null: a deletion, or too large to show, `tooLarge` says so), refused when
   * the number is not one of this file's versions.
   */
  async showVersion(
    flowPath: string,
    path: string,
    version: number,
  ): Promise<{ content: string | null; tooLarge: string | null }> {
    return versionToShow(this.options.client, this.repo, flowPath, path, version);
  }

  /**
   * Writes a version the service keeps of a file to disk (a deletion removes it), by the containment rule, as
   * its user would: it is then sent as any edit, on this checkout's base (`flowsync restore`, the window's
   * Restore). When the service holds another version than the one last synced here, that edit is a conflict,
   * recorded at once (restore-outcome.ts): a restore of the base itself would else be pending nowhere and sent
   * never. Refused when the number is not one of this file's versions.
   */
  async restoreVersion(
    flowPath: string,
    path: string,
    version: number,
  ): Promise<{
    deleted: boolean;
    outcome: RestoreOutcome;
    service: ServiceVersion | null;
    kept: KeptCopy | null;
  }> {
    checkServiceFile(this.layout, 'flowsync restore', flowPath, path);
    const { state } = this.options;
    const keeper = await this.copyKeeper();
    let kept: KeptCopy | null = null;
    const { content, hash, current } = await versionText(
      this.options.client,
      this.repo,
      flowPath,
      path,
      version,
    );
    let outcome: RestoreOutcome = 'sent';
    await this.port.scheduler.run(async () => {
      const base = state.filesOfFlow(this.repoId, flowPath).find((f) => f.path === path)?.ackedHash ?? null;
      // An edit not sent is kept before the version is written over it, as for "take the service's".
      kept = await keepLocalBytes(keeper, flowPath, path, {
        baseHash: base,
        serviceHash: current?.hash ?? null,
      });
      replaceContained(this.repo.root, `${flowPath}/${path}`, content);
      outcome = restoreOutcome({
        base,
        service: current === null ? undefined : current.hash,
        restored: hash,
      });
      if (outcome === 'conflict' && current !== null)
        state.recordConflicts(this.repoId, [
          {
            flowPath,
            path,
            baseHash: base,
            serviceHash: current.hash,
            sentHash: hash,
            writtenBy: writerShown({ writtenBy: current.written_by, member: current.member }),
            writtenAt: current.written_at,
            raised: true,
          },
        ]);
    });
    this.port.scheduler.want();
    this.port.refresh();
    const service =
      current === null ? null : { writtenBy: current.written_by, writtenAt: current.written_at };
    return { deleted: content === null, outcome, service, kept };
  }

  /**
   * What a conflict is, as two diffs from the version last synced here: to the service's version (what the other
   * writer did) and to the disk's (what was done here). Null when the file is not in conflict.
   */
  async compare(flowPath: string, path: string): Promise<ConflictComparison | null> {
    const conflict = this.options.state
      .conflicts(this.repoId)
      .find((c) => c.flowPath === flowPath && c.path === path);
    if (!conflict) return null;
    const sides = await conflictSides(this.options.client, this.repo, conflict);
    const file = `${flowPath}/${path}`;
    const base = { side: sides.base, label: 'last synced here' };
    return {
      toService: sideDiff(file, base, { side: sides.service, label: 'on the service' }),
      toDisk: sideDiff(file, base, { side: sides.disk, label: 'here' }),
    };
  }

  /**
   * Writes the service's version of a file into the repository (null: removes the file), and records it as the
   * state's view of the disk at once, so that no round in between sends what was there before. Returns why the
   * file was not written (a folder on the way that is a link, a path the agent never writes, a disk error), or
   * null: one file that cannot be written is its own line, never the end of the others.
   */
  private putOnDisk(
    flowPath: string,
    path: string,
    copy: { hash: string; content: string } | null,
  ): string | null {
    const { state } = this.options;
    const relative = `${flowPath}/${path}`;
    let replaced: boolean;
    try {
      replaced = replaceContained(this.repo.root, relative, copy?.content ?? null);
    } catch (error) {
      if (error instanceof NotWritten) return error.why;
      const code = (error as NodeJS.ErrnoException).code;
      if (typeof code === 'string') return `the disk refused it (${code})`;
      throw error;
    }
    // A .gitignore taken from the service changes what is ignored at once, watcher or not (`flowsync sync`).
    if (relative.endsWith('/.gitignore')) this.rules.forget(relative.slice(0, -'/.gitignore'.length));
    if (copy === null) {
      if (replaced) state.markGone(this.repoId, [{ flowPath, path }]);
      return replaced ? null : 'a folder on the way is not a folder of the repository';
    }
    const stat = lstatSync(join(this.repo.root, relative));
    state.saveLocal(this.repoId, [
      {
        flowPath,
        path,
        size: stat.size,
        mtimeMs: stat.mtimeMs,
        ctimeMs: stat.ctimeMs,
        ino: stat.ino,
        localHash: copy.hash,
        warning: null,
      },
    ]);
    return null;
  }

  /** The repository as the service side sees it: its name, and the layout its answers are checked against. */
  private get serviceRepo(): ServiceRepository {
    return this.round.serviceRepo;
  }
}

/**
 * More files to delete on the service than the deletion guard lets through, and its user did not confirm this list
 * (`--yes` after the list, or the window's dialog that lists them): nothing was deleted.
 */
export class DeletionsNotConfirmed extends Error {
  override readonly name = 'DeletionsNotConfirmed';
  constructor(readonly count: number) {
    super(
      `${count} files to delete on the service is more than this repository deletes without asking: nothing was ` +
        'deleted; confirm this list (`flowsync resolve --not-in-checkout --mine --yes`, or the window, which lists them).',
    );
  }
}

/** Who wrote the service's current version of a file, and when, as the service says. */
export interface ServiceVersion {
  writtenBy: string | null;
  writtenAt: string;
}

/** A file whose bytes here were kept before the service's were written over them, and where (conflict-copy.ts). */
export type KeptFile = { flowPath: string; path: string } & KeptCopy;

/** A file the service's copy was not written to, and why (a per-file line: the others went on). */
export interface NotWrittenFile {
  flowPath: string;
  path: string;
  reason: string;
}

/** A file newer on the service, and what taking it does here; with who wrote the service's version, and when. */
export interface NewerFile {
  flowPath: string;
  path: string;
  change: IncomingChange;
  /** The service's version listed (null: deleted there): what a confirmed take takes. */
  serviceHash: string | null;
  writtenBy: string | null;
  writtenAt: string | null;
}

/** A file newer on the service as its user saw it listed, to take on that version only. */
export interface SeenNewer {
  flowPath: string;
  path: string;
  serviceHash: string | null;
}

/** A file taken from the service, and what that did here. */
export interface TakenFile {
  flowPath: string;
  path: string;
  change: IncomingChange;
}

function newerFile(file: FileConflict & { change: IncomingChange }): NewerFile {
  const { flowPath, path, change, serviceHash, writtenBy, writtenAt } = file;
  return { flowPath, path, change, serviceHash, writtenBy, writtenAt };
}

/** A file of the service as its user saw it listed: its version (hash) is what a deletion of it is based on. */
export interface SeenFile {
  flowPath: string;
  path: string;
  hash: string;
}

/** The files listed now that its user saw (all of them when `seen` is absent), on the version seen. */
function onlySeen(listed: ListedServiceFile[], seen: readonly SeenFile[] | undefined): ListedServiceFile[] {
  if (seen === undefined) return listed;
  const hashes = new Map(seen.map((file) => [serviceFileKey(file.flowPath, file.path), file.hash]));
  return listed.flatMap((file) => {
    const hash = hashes.get(serviceFileKey(file.flowPath, file.path));
    return hash === undefined ? [] : [{ ...file, hash }];
  });
}

/**
 * The sha256 of a repository file's bytes (the hash the state and the service use), read by the containment rule
 * (no link followed, a regular file inside the root); null when no file is there, '' when something is there that
 * is not read (a link, a FIFO, too large, unreadable): never equal to a base, so nothing is written over it.
 */
function diskHash(root: string, path: string): string | null {
  const read = readContained(root, path, MAX_FILE_BYTES);
  if (read.missing) return null;
  if (read.unreadable || read.warning || !read.bytes) return '';
  return createHash('sha256').update(read.bytes).digest('hex');
}

/**
 * Whether anything is at `path`: lstat, not exists, so a link of that name (even one to nowhere) counts; a path
 * that cannot be looked at (a file where a folder should be, no permission) counts too, as nothing is written there.
 */
function somethingAt(path: string): boolean {
  try {
    return lstatSync(path, { throwIfNoEntry: false }) !== undefined;
  } catch {
    return true;
  }
}
