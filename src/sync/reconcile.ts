import { whoWrote, writtenByMe, type MemberRef } from '../protocol/index.ts';

/*
 * What happens when the service differs from what this checkout knows of a flow, decided once, as a plan
 * (Mutagen's Reconcile(ancestor, alpha, beta) returns its changes and conflicts the same way). Pure: the check of
 * the service, the first learning of a service, a refused write, a flow sent without an answer and a restore ask it
 * and carry out its plan; nothing here reads the disk, the state, the service or the clock. Its rows:
 * test/sync/reconcile.test.ts. The model of a whole team (test/model) drives it.
 */

/**
 * Who this checkout is: the writer label its versions carry (with its random checkout id), and the member the
 * service knows its token by (`whoami`; null or absent: a service without members, or not known yet).
 */
export interface Me {
  writer?: string;
  memberId?: string | null;
}

/** The member the service knows a checkout's token by (`whoami`): its id (null: not said), and whether it only reads. */
export interface MemberOfService {
  id: string | null;
  /** Role `read`: the checkout runs receive-only, nothing is ever sent. */
  readOnly: boolean;
}

/** Where a checkout learns who it is: its label, and the service's answer for its member, asked once (the agent's). */
export interface MeSource {
  writer?: string;
  /**
   * The member the service knows this checkout's token by (`whoami`, asked once per service and kept); null: a
   * service without members. Absent: not asked (the label alone decides, as before members).
   */
  member?: () => Promise<MemberOfService | null>;
}

/** Who this checkout is, for the own-write checks: asked before any of them, so none is made on the label alone. */
export async function whoIsMe(source: MeSource): Promise<Me> {
  const member = source.member ? await source.member() : null;
  return { writer: source.writer, memberId: member?.id ?? null };
}

/** One file of the flow as this checkout knows it. */
export interface KnownFile {
  path: string;
  /** The version the service last acknowledged for this checkout (its base); null: none. */
  base: string | null;
  /** What is on disk: its hash; null: nothing; '' (or any hash) for a file on disk that is not sent. */
  disk: string | null;
  /**
   * What this checkout sent of it without an answer (its flow in flight): that hash, null for a deletion;
   * undefined: nothing in flight for it. A version of those very bytes under its id is its own lost acknowledgement.
   */
  sent?: string | null;
}

/** A file as the service lists it now (its current version). */
export interface ServiceFile {
  path: string;
  hash: string;
  id?: string;
  writtenBy: string | null;
  writtenAt: string | null;
  /**
   * The member whose credential wrote it, as the service recorded it: the label above is only the
   * client's word. Absent: a service without members; null: written before it had members.
   */
  member?: MemberRef | null;
}

/** A difference recorded before (a behind or conflict row) and the base it was recorded on. */
export interface Recorded {
  path: string;
  base: string | null;
}

export interface FlowFacts {
  flowPath: string;
  /** Every file of the flow the state knows (on disk, acknowledged, or both). */
  files: readonly KnownFile[];
  /** What the service lists of the flow now. */
  listed: readonly ServiceFile[];
  /** The differences recorded before, not yet cleared. */
  recorded?: readonly Recorded[];
  /**
   * The service went back in time (its history lacks a base this checkout synced: three-way.ts's wentBackInTime,
   * asked of the history by the I/O around this): nothing it holds is newer than what is here.
   */
  wentBack?: boolean;
  me: Me;
}

/** A file whose service version differs from this checkout's base: behind, a conflict, or deleted there. */
export interface Difference {
  flowPath: string;
  path: string;
  baseHash: string | null;
  /** What the service holds now; null: deleted there (or never had). */
  serviceHash: string | null;
  /** What is on disk here. */
  sentHash: string | null;
  /** Who wrote the service's version, as people read it (writerShown): the member first, where the service has one. */
  writtenBy: string | null;
  writtenAt: string | null;
  /** The service went back in time: what it holds is not newer (never "take theirs"). */
  lost?: boolean;
  /** Raised by this checkout's own situation: a conflict whatever the hashes say, until its user settles it. */
  raised?: boolean;
}

/** The plan for one flow. */
export interface ServicePlan {
  flowPath: string;
  /** Differences to record for their user (three-way.ts's fileSide says behind or conflict of each). */
  record: Difference[];
  /**
   * Service versions that become this checkout's base without a word: its own (a lost acknowledgement), or the
   * very bytes on disk here (a git pull made the disk the service's). What is on disk is sent on them next round.
   */
  adopt: { path: string; hash: string; id?: string; why: 'own' | 'same as disk' }[];
  /** Recorded differences the service no longer has (a teammate's revert): cleared at their base. */
  cleared: { path: string; hash: string }[];
  /** Files on the service that this checkout never had and does not have on disk: listed, neither taken nor deleted. */
  notInCheckout: string[];
}

/**
 * Whether the service's current version of a file is one this checkout wrote and lost the acknowledgement of: named
 * by its writer id AND with evidence of it: the very bytes on disk here, or the bytes it sent without an answer. The
 * name alone is not proof: a checkout copied with its state and its id (one machine image, a copied home) took a
 * teammate's edit for its own and sent its older bytes over it. The team model found four such ways, each a row of
 * test/sync/reconcile.test.ts: the label alone; "its flow is in flight" (a deletion sent, its answer lost, the
 * copy's re-created file taken for its own and deleted); "its state knows nothing" (a rebuilt state took the copy's
 * edit for its own); "the service went back in time" (the copy's edit made after the restore taken for the older
 * version the service went back to). Without evidence it is a conflict of two versions: asked, a copy kept.
 */
export function isOwnVersion(
  version: { hash: string; writtenBy: string | null; member?: MemberRef | null },
  file: KnownFile,
  me: Me,
): boolean {
  // The label is the client's word; the member is the service's: another member's token writing under
  // this checkout's exact label is that member's version, a conflict by its real writer, never adopted.
  if (!writtenByMe(version, { writer: me.writer, memberId: me.memberId ?? null })) return false;
  return version.hash === file.disk || version.hash === file.sent;
}

/**
 * Who wrote a service version, as its user reads it: a member's version by protocol's whoWrote (the member the
 * service recorded, then the label the client sent: "bob · bob@desk:~/app (checkout 91c0…)"). A service without
 * members, a row from before them and the shared token name nobody: the label alone, as the agent said it before.
 */
export function writerShown(version: { writtenBy: string | null; member?: MemberRef | null }): string | null {
  return version.member && !version.member.shared
    ? whoWrote(version.member, version.writtenBy)
    : version.writtenBy;
}

/**
 * The writer a listing names, for telling teammates from this checkout (git-motions.ts): its own label for its own
 * versions, else who wrote it as shown (writerShown), so another member's version under this checkout's label is
 * another writer's.
 */
export function writerSeen(
  version: { writtenBy: string | null; member?: MemberRef | null },
  me: Me,
): string | null {
  return writtenByMe(version, { writer: me.writer, memberId: me.memberId ?? null })
    ? version.writtenBy
    : writerShown(version);
}

/** Where a service file stands for a checkout that never had it: not on disk and never acknowledged here. */
export function isNotInCheckout(file: KnownFile | undefined): boolean {
  return file === undefined || (file.base === null && file.disk === null);
}

/** The plan for one flow: what the service holds against what this checkout knows. */
export function reconcileFlow(facts: FlowFacts): ServicePlan {
  const { flowPath, me } = facts;
  const plan: ServicePlan = { flowPath, record: [], adopt: [], cleared: [], notInCheckout: [] };
  const listed = new Map(facts.listed.map((file) => [file.path, file]));
  const known = new Map(facts.files.map((file) => [file.path, file]));
  const differs = new Set<string>();
  for (const file of facts.files) {
    const now = listed.get(file.path);
    if (file.base === null) {
      if (now === undefined) continue;
      // Never acknowledged here, on the service: the same bytes, or this checkout's own lost acknowledgement (a
      // version sent, then changed or deleted here before the answer: what is on disk goes on it).
      if (file.disk !== null && now.hash === file.disk) plan.adopt.push(adoption(now, 'same as disk'));
      else if (isOwnVersion(now, file, me)) plan.adopt.push(adoption(now, 'own'));
      else if (file.disk !== null) {
        // A file here meets another there, on no base (an old clone, an edit made while the state was lost): a
        // conflict now, named, not left for a refused write. The team model: deleted here before that write, it
        // was on the service, not here, and unnamed while "in sync" was said.
        differs.add(file.path);
        plan.record.push(difference(facts, file, now, {}));
      }
      continue;
    }
    if (now?.hash === file.base) continue;
    differs.add(file.path);
    if (now !== undefined && now.hash === file.disk) plan.adopt.push(adoption(now, 'same as disk'));
    else if (now !== undefined && !facts.wentBack && isOwnVersion(now, file, me))
      plan.adopt.push(adoption(now, 'own'));
    else plan.record.push(difference(facts, file, now, { lost: facts.wentBack === true }));
  }
  const adopted = new Set(plan.adopt.map((file) => file.path));
  for (const file of facts.listed)
    if (!adopted.has(file.path) && isNotInCheckout(known.get(file.path))) plan.notInCheckout.push(file.path);
  for (const row of facts.recorded ?? []) {
    const file = known.get(row.path);
    // Recorded on the base still acknowledged, and the service holds that base again: a revert, nothing waits.
    if (
      row.base !== null &&
      file?.base === row.base &&
      !differs.has(row.path) &&
      listed.get(row.path)?.hash === row.base
    )
      plan.cleared.push({ path: row.path, hash: row.base });
  }
  return plan;
}

function adoption(now: ServiceFile, why: 'own' | 'same as disk'): ServicePlan['adopt'][number] {
  return { path: now.path, hash: now.hash, ...(now.id === undefined ? {} : { id: now.id }), why };
}

function difference(
  facts: FlowFacts,
  file: KnownFile,
  now: ServiceFile | undefined,
  marks: { lost?: boolean; raised?: boolean },
): Difference {
  return {
    flowPath: facts.flowPath,
    path: file.path,
    baseHash: file.base,
    serviceHash: now?.hash ?? null,
    sentHash: file.disk,
    writtenBy: now === undefined ? null : writerShown(now),
    writtenAt: now?.writtenAt ?? null,
    ...(marks.lost === true ? { lost: true } : {}),
    ...(marks.raised === true ? { raised: true } : {}),
  };
}

/**
 * The flows a look at the service compares, from each flow's aggregate hash (null: no files) as the service lists
 * it now, as it listed it at the last look (`last`; null: a full look, every flow), and as this checkout
 * acknowledged it: `changed` are those whose listing moved since the last look, or whose acknowledged versions
 * changed here since (all, for a full look), `differing`
 * those of them whose aggregate is not what this checkout acknowledged (only these are listed file by file). Flows
 * sent without an answer, or under a held root, are left for their round.
 */
export function flowsToCompare(input: {
  listed: ReadonlyMap<string, string | null>;
  last: ReadonlyMap<string, string | null> | null;
  acknowledged: ReadonlyMap<string, string | null>;
  /** Flows whose acknowledged versions changed here since the last look: compared whatever the service lists. */
  ackedHere?: readonly string[];
  leftForTheirRound: (flowPath: string) => boolean;
}): { changed: string[]; differing: Set<string> } {
  const { listed, last, acknowledged } = input;
  const candidates =
    last === null
      ? [
          ...new Set([
            ...acknowledged.keys(),
            ...[...listed].filter(([, hash]) => hash !== null).map(([path]) => path),
          ]),
        ]
      : [...new Set([...changedSince(listed, last), ...(input.ackedHere ?? [])])];
  const changed = candidates.filter((flowPath) => !input.leftForTheirRound(flowPath));
  const differing = new Set(
    changed.filter((flowPath) => (acknowledged.get(flowPath) ?? null) !== (listed.get(flowPath) ?? null)),
  );
  return { changed, differing };
}

/** The flows whose aggregate the service lists now differs from the one it listed at the last look. */
export function changedSince(
  listed: ReadonlyMap<string, string | null>,
  last: ReadonlyMap<string, string | null>,
): string[] {
  return [...new Set([...listed.keys(), ...last.keys()])].filter(
    (flowPath) => (last.get(flowPath) ?? null) !== (listed.get(flowPath) ?? null),
  );
}
