import type { ServicePlan } from '../../../src/sync/reconcile.ts';
import { FLOWS, type ModelCheckout } from './checkout.ts';
import { flowOf, type Refusal } from './service.ts';
import { currentTree, versionKey, type Team } from './team.ts';

/*
 * What a checkout's agent does by itself: it scans (its watcher keeps the state's disk hashes up to date while it
 * runs), looks at the service (src/sync/service-check.ts: reconcileFlow over the listing, went-back asked of the
 * changed files' histories) and runs rounds (the guard, the plan of each flow, the service's answer). The rules
 * it breaks are checked where they happen: the guard, a version overwritten unseen, a false "went back".
 */

/** The state catches up with the disk, and recorded differences the disk now settles are settled. */
export function scan(team: Team, c: ModelCheckout): void {
  c.scanned = new Map(c.disk);
  // state-motions.ts: a mark lasts while its file is as git left it and not sent.
  for (const [path, held] of [...c.gitHeld])
    if ((c.disk.get(path) ?? null) !== held.hash || (c.bases.get(path) ?? null) === held.hash)
      c.gitHeld.delete(path);
  for (const [path, hash] of [...c.reverts]) if ((c.disk.get(path) ?? null) !== hash) c.reverts.delete(path);
  for (const path of [...c.heldSet, ...c.confirmed])
    if (c.disk.has(path)) {
      c.heldSet.delete(path);
      c.confirmed.delete(path);
    }
  // state.settleConflictsMatchingDisk: the disk is the service's, or only this side changed.
  for (const [path, row] of [...c.rows]) {
    const side = c.sideOf(team.core, path, row);
    if (side === 'in sync' || side === 'yours to send') {
      c.setBase(path, row.service);
      c.rows.delete(path);
    }
  }
}

/**
 * The look at the service: what it lists against what this checkout knows, flow by flow. `told`: the look the live
 * feed asks for (src/sync/told-looks.ts), of those flows only (a teammate wrote them); the others are as last seen.
 */
export function look(team: Team, c: ModelCheckout, told?: readonly string[]): void {
  if (!c.running) return;
  scan(team, c);
  const { service, core } = team;
  const flows = told === undefined ? FLOWS : FLOWS.filter((flow) => told.includes(flow));
  // Went back in time: asked of the history of the files the service holds in another version than their base.
  const samples = flows
    .flatMap((flow) =>
      c
        .knownFiles(flow)
        .filter((file) => file.base !== null && (service.files.get(file.path)?.hash ?? null) !== file.base)
        .map((file) => ({
          path: file.path,
          base: file.base,
          service: service.files.get(file.path)?.hash ?? null,
          versions: service.versionsNewestFirst(file.path),
        })),
    )
    .slice(0, 20);
  const wentBack = core.wentBackInTime(samples);
  const truly = samples.some((sample) => !service.hasInHistory(sample.path, sample.base!));
  if (wentBack && !truly)
    team.violation(
      'went back in time said when it did not',
      `${c.name} sees ${samples.map((s) => `${s.path} ${s.base}→${s.service} (history ${s.versions.map((v) => `${v.hash ?? 'deleted'}${v.copy ? ' (copy)' : ''}`).join(', ')})`).join('; ')}`,
    );
  for (const path of [...c.notInCheckout])
    if (flows.includes(flowOf(path) as (typeof FLOWS)[number])) c.notInCheckout.delete(path);
  for (const flow of flows) {
    const plan = core.reconcileFlow({
      flowPath: flow,
      files: c.knownFiles(flow),
      listed: service.listed(flow),
      recorded: [...c.rows]
        .filter(([path]) => flowOf(path) === flow)
        .map(([path, row]) => ({ path, base: row.base })),
      wentBack,
      me: { writer: c.writer },
    });
    carryOut(c, plan);
  }
  if (told === undefined) {
    c.seenService = currentTree(service);
    c.sent.clear();
    c.learned = true;
    return;
  }
  const now = currentTree(service);
  for (const path of [...c.seenService.keys(), ...now.keys()])
    if (flows.includes(flowOf(path) as (typeof FLOWS)[number])) {
      const hash = now.get(path);
      if (hash === undefined) c.seenService.delete(path);
      else c.seenService.set(path, hash);
    }
  for (const path of [...c.sent.keys()])
    if (flows.includes(flowOf(path) as (typeof FLOWS)[number])) c.sent.delete(path);
}

/** The I/O around the plan: rows recorded, own versions adopted, reverts settled, files not in this checkout. */
function carryOut(c: ModelCheckout, plan: ServicePlan): void {
  for (const difference of plan.record) {
    c.rows.set(difference.path, {
      base: difference.baseHash,
      service: difference.serviceHash,
      writtenBy: difference.writtenBy,
      ...(difference.lost ? { lost: true } : {}),
      ...(difference.raised ? { raised: true } : {}),
    });
  }
  for (const { path, hash } of [...plan.adopt, ...plan.cleared]) {
    c.setBase(path, hash);
    c.rows.delete(path);
  }
  for (const path of plan.notInCheckout) c.notInCheckout.add(path);
}

/**
 * A round: the first learning of the service, the flows sent without an answer settled, the deletion guard, then
 * each flow's plan sent on its bases. `answerLost`: the service takes what is sent, and the agent is killed before
 * it hears so (its state keeps what it sent, and the next look settles it).
 */
export function round(team: Team, c: ModelCheckout, { answerLost = false } = {}): void {
  if (!c.running) return;
  scan(team, c);
  const { core, service, guard } = team;
  if ((!c.learned && c.bases.size === 0) || c.sent.size > 0) look(team, c);
  const waiting = c.deletions(core);
  // The state's marks (src/sync/state-deletions.ts): confirmed deletions go whatever the verdict; a held set
  // stays held until confirmed or back on disk.
  const confirmed = waiting.filter((path) => c.confirmed.has(path));
  const facts = {
    waiting: waiting.length,
    confirmed: confirmed.length,
    held: waiting.filter((path) => c.heldSet.has(path) && !c.confirmed.has(path)).length,
    acknowledged: c.bases.size,
    guard,
    watching: false,
    seen: null,
    now: 0,
  };
  const decided = core.deletionVerdict(facts);
  c.held = decided.verdict === 'hold' ? decided.held : 0;
  if (decided.verdict === 'hold') for (const path of waiting) if (!c.confirmed.has(path)) c.heldSet.add(path);
  const holdDeletions = decided.verdict !== 'send';
  let deleted = 0;
  for (const flow of FLOWS) {
    const request = core.planFlow(c.plannedFiles(flow), { holdDeletions, confirmed: c.confirmed });
    if (request === null) continue;
    for (const { path } of request.deletes)
      if (c.heldSet.has(path) && !c.confirmed.has(path))
        team.violation('a held deletion reaches the service unconfirmed', `${c.name} deletes ${path}`);
    for (const write of request.writes) c.see(write.path, write.hash);
    for (const { path, hash } of [
      ...request.writes,
      ...request.deletes.map(({ path }) => ({ path, hash: null })),
    ])
      if (c.reverts.has(path) && c.reverts.get(path) === hash)
        team.violation(
          "a revert of a teammate's version to the branch's committed one reaches the service unconfirmed",
          `${c.name} sends ${path} ${hash ?? 'deleted'}`,
        );
    const answer = service.write(request, c.writer);
    if (!answer.taken) {
      refusedFlow(team, c, answer.refused);
      continue;
    }
    for (const { path, hash, replaced } of answer.written) {
      if (replaced !== null && !c.hasSeen(path, replaced))
        team.violation(
          "a teammate's version is overwritten unseen",
          `${c.name} wrote ${hash ?? 'a deletion'} over ${path} ${replaced}, which it never had`,
        );
      team.acknowledged.add(versionKey(path, hash));
      // Deletions its user confirmed go whatever the guard: only the others count against it.
      if (hash === null && !confirmed.includes(path)) deleted++;
    }
    for (const { path, hash } of request.writes) acknowledge(c, path, hash, answerLost);
    for (const { path } of request.deletes) acknowledge(c, path, null, answerLost);
  }
  if (deleted > guard.files)
    team.violation(
      'a deletion over the guard reaches the service unconfirmed',
      `${c.name} deleted ${deleted} files its user did not confirm`,
    );
}

function acknowledge(c: ModelCheckout, path: string, hash: string | null, answerLost: boolean) {
  c.heldSet.delete(path);
  c.confirmed.delete(path);
  if (answerLost) {
    c.sent.set(path, hash);
    return;
  }
  c.setBase(path, hash);
  if (hash === null) c.seenService.delete(path);
  else c.seenService.set(path, hash);
}

/**
 * A flow refused for a stale base: each refused file is recorded for its user (src/sync/conflicts.ts), except a
 * version this checkout wrote itself (reconcile.ts's isOwnVersion, the one definition), which becomes its base; the
 * flow's other files go in the next round, the refused one left out.
 */
function refusedFlow(team: Team, c: ModelCheckout, refused: readonly Refusal[]) {
  for (const r of refused) {
    const file = c.knownFiles(flowOf(r.path)).find((known) => known.path === r.path) ?? {
      path: r.path,
      base: null,
      disk: null,
    };
    const version = r.service === null ? null : { hash: r.service, writtenBy: r.writtenBy };
    if (version !== null && team.core.isOwnVersion(version, file, { writer: c.writer })) {
      c.setBase(r.path, version.hash);
      c.rows.delete(r.path);
    } else c.rows.set(r.path, { base: r.base, service: r.service, writtenBy: r.writtenBy });
    if (r.service === null) c.seenService.delete(r.path);
    else c.seenService.set(r.path, r.service);
  }
}
