import { FILE_VERSIONS_PAGE_MAX } from '../protocol/index.ts';
import {
  changedSince,
  flowsToCompare,
  reconcileFlow,
  whoIsMe,
  writerSeen,
  type Difference,
  type FlowFacts,
  type Recorded,
  type ServicePlan,
} from './reconcile.ts';
import { listServiceFiles, type ServiceRepository } from './service-copy.ts';
import type { ServicePort } from './service-port.ts';
import { wentBackInTime } from './three-way.ts';

/**
 * Files whose history is asked when a check finds versions changed on the service: one call each, enough to tell a
 * teammate's edits (the base is in every file's history) from a service that went back in time (in none).
 */
const LOST_SAMPLES = 20;

/** What the check needs besides the engine's port: the service side's answers and its count of unknown files. */
export interface CheckPort extends ServicePort {
  takesBases(): Promise<boolean>;
  serviceRepo(): ServiceRepository;
  /** Files on the service this checkout never had, as the service side shows them. */
  notInCheckout: { get(): number; set(files: number): void };
}

/**
 * The look at the service: what it holds against what this checkout acknowledged, every minute (quick:
 * only the flows whose aggregate changed), at each rescan and before a one-shot run. A teammate's edit of a file
 * untouched here is behind, one of a file changed here a conflict; a service that went back in time is said.
 */
export class ServiceCheck {
  /** Each flow's aggregate on the service at the last check (null: no files there), for the quick check. */
  private lastListing: Map<string, string | null> | null = null;
  /** Files on the service this checkout never had, per flow, as the last checks counted them. */
  private unknownByFlow = new Map<string, number>();
  /**
   * When the last check that went through began (ms since the epoch; null: none yet): "in sync" is said only on a
   * look this fresh (fresh-look.ts). A service of the spec alone lists nothing: its answer is the look.
   */
  lookedAt: number | null = null;

  constructor(private readonly port: CheckPort) {}

  /**
   * Compares what the service holds with what this checkout acknowledged, in one `list_flows` call (each flow's
   * aggregate hash) and a listing of each flow that differs, and carries out reconcile.ts's plan for each: what it
   * records (behind, conflict, deleted there), adopts (its own lost acknowledgements, the disk's own bytes),
   * clears (a teammate's revert) and counts as not in this checkout. Only with a service that lists (flowsync's
   * own); flows sent without an answer, under a held root, are left for their round. Returns the differences recorded.
   */
  async check({
    quick = false,
    round = true,
    told,
  }: { quick?: boolean; round?: boolean; told?: ReadonlyMap<string, string | null> } = {}): Promise<number> {
    const { state } = this.port;
    const at = Date.now();
    if (!(await this.port.takesBases())) {
      this.lookedAt = at;
      return 0;
    }
    // Told by the live feed which flows changed there (and their aggregates now): the last listing with those, and
    // no listing of the whole repository. Before a first listing there is nothing to apply them to.
    const fromTold = told !== undefined && this.lastListing !== null;
    const listedNow = fromTold ? new Map(this.lastListing) : await this.listFlows();
    for (const [flowPath, hash] of fromTold ? told : []) listedNow.set(flowPath, hash);
    const held = new Set(state.uncertainFlows(this.port.repoId));
    // Quick (the check every minute, or the live feed's): only the flows whose aggregate changed on the service
    // since the last check are compared, so a check of an unchanged repository is one call and no read of the state
    // (bench/service-check.ts).
    const last = quick || fromTold ? this.lastListing : null;
    // Compared again whatever the service lists: the flows whose acknowledged versions changed here, and those whose
    // files appeared on disk or went from it ("not in this checkout" is of the disk as it is now).
    const presence = state.presence.changed(this.port.repoId);
    const ackedHere = [...new Set([...state.ackedChanged.list(this.port.repoId), ...presence])];
    const scope = flowsToCompare({
      listed: listedNow,
      last,
      acknowledged: state.acknowledgedAggregates(
        this.port.repoId,
        last === null ? null : [...new Set([...changedSince(listedNow, last), ...ackedHere])],
      ),
      ackedHere,
      leftForTheirRound: (flowPath) => held.has(flowPath) || this.port.guard.holds(flowPath),
    });
    const recorded = new Map<string, Recorded[]>();
    for (const c of [...state.conflicts(this.port.repoId), ...state.behind(this.port.repoId)]) {
      const rows = recorded.get(c.flowPath) ?? [];
      if (rows.length === 0) recorded.set(c.flowPath, rows);
      rows.push({ path: c.path, base: c.baseHash });
    }
    // Listed file by file: the flows that differ. A flow changed there whose aggregate is what this checkout
    // acknowledged again (a teammate's revert) lists as acknowledged: only its recorded differences are cleared.
    const facts: FlowFacts[] = [];
    // Who this checkout is, known before any version is judged its own (its member, where the service has them).
    const me = scope.changed.length > 0 ? await whoIsMe(this.port.repo) : {};
    for (const flowPath of scope.changed) {
      const differing = scope.differing.has(flowPath);
      if (!differing && !recorded.has(flowPath)) continue;
      const files = state
        .filesOfFlow(this.port.repoId, flowPath)
        .map((file) => ({ path: file.path, base: file.ackedHash, disk: file.localHash }));
      const listing = differing
        ? await listServiceFiles(this.port.client, this.port.serviceRepo(), flowPath)
        : null;
      if (listing !== null) this.port.sawWriters(listing.map((file) => writerSeen(file, me)));
      facts.push({
        flowPath,
        files,
        listed:
          listing ??
          files.flatMap((file) =>
            file.base === null
              ? []
              : [{ path: file.path, hash: file.base, writtenBy: null, writtenAt: null }],
          ),
        recorded: recorded.get(flowPath) ?? [],
        me,
      });
    }
    let plans = facts.map((flow) => reconcileFlow(flow));
    if (await this.wentBack(plans)) plans = facts.map((flow) => reconcileFlow({ ...flow, wentBack: true }));
    let differences: Difference[] = [];
    await this.port.scheduler.run(async () => {
      differences = this.carryOut(plans, facts);
    });
    // Files on the service this checkout never had, per flow: a quick check counts again only the flows it compared.
    const unknownByFlow = new Map(last === null ? [] : this.unknownByFlow);
    for (const flowPath of scope.changed) unknownByFlow.delete(flowPath);
    for (const plan of plans) unknownByFlow.set(plan.flowPath, plan.notInCheckout.length);
    let unknown = 0;
    for (const count of unknownByFlow.values()) unknown += count;
    // What was compared now is the point the next quick check starts from; flows left for their round are not.
    const seen = new Map(last ?? []);
    for (const [flowPath, hash] of listedNow) seen.set(flowPath, hash);
    for (const flowPath of last?.keys() ?? []) if (!listedNow.has(flowPath)) seen.delete(flowPath);
    for (const flowPath of [...seen.keys()])
      if (held.has(flowPath) || this.port.guard.holds(flowPath)) seen.delete(flowPath);
    this.lastListing = seen;
    // Compared now; an acknowledgement its own carrying out made is compared again at the next look (one listing).
    state.ackedChanged.forget(this.port.repoId, ackedHere);
    state.presence.forget(this.port.repoId, presence);
    this.unknownByFlow = unknownByFlow;
    const changedSomething = plans.some(
      (plan) => plan.record.length + plan.adopt.length + plan.cleared.length > 0,
    );
    if (changedSomething || scope.differing.size > 0 || this.port.notInCheckout.get() !== unknown) {
      this.port.notInCheckout.set(unknown);
      this.port.refresh();
    }
    // Own versions adopted: sent on them now (not from a dry run's plan, whose state is a copy that sends nothing).
    if (changedSomething && round) this.port.scheduler.want();
    // A look the feed asked for saw only the flows it named: not a look at the whole service.
    if (!fromTold) this.lookedAt = at;
    return differences.length;
  }

  /** Each flow's aggregate on the service now (null: no files there), in one `list_flows` call. */
  private async listFlows(): Promise<Map<string, string | null>> {
    const { flows } = await this.port.client.flowDef.listFlows({
      repo_owner: this.port.repo.owner,
      repo_name: this.port.repo.name,
    });
    return new Map(flows.map((flow) => [flow.flow_path, flow.files > 0 ? flow.hash : null]));
  }

  /**
   * Carries out the plans, in the queue: only where the state still acknowledges what was compared (a round that
   * ran while the service was listed changed it: its own write, not a difference). Returns what was recorded.
   */
  private carryOut(plans: readonly ServicePlan[], facts: readonly FlowFacts[]): Difference[] {
    const { state, repoId } = this.port;
    const recorded: Difference[] = [];
    plans.forEach((plan, at) => {
      const then = new Map(facts[at]!.files.map((file) => [file.path, file.base]));
      const now = new Map(
        state.filesOfFlow(repoId, plan.flowPath).map((file) => [file.path, file.ackedHash]),
      );
      const still = (path: string) => (now.get(path) ?? null) === (then.get(path) ?? null);
      for (const file of plan.adopt.filter((file) => still(file.path))) {
        if ((then.get(file.path) ?? null) === null)
          state.adoptOwnVersions(repoId, [
            { flowPath: plan.flowPath, path: file.path, hash: file.hash, id: file.id ?? '' },
          ]);
        else state.settleConflict(repoId, plan.flowPath, file.path, file.hash);
      }
      const differences = plan.record.filter((file) => still(file.path));
      state.recordConflicts(repoId, differences);
      recorded.push(...differences);
      for (const file of plan.cleared.filter((file) => still(file.path)))
        state.settleConflict(repoId, plan.flowPath, file.path, file.hash);
    });
    return recorded;
  }

  /**
   * Whether the service went back in time (three-way.ts's wentBackInTime), asked of the history of a few of the
   * files it holds in another version than their base: then none of them is "newer on the service" (taking it would
   * write an older version over what may be the only copy), each is marked `lost`, and the status says it once.
   */
  private async wentBack(plans: readonly ServicePlan[]): Promise<boolean> {
    const changed = plans.flatMap((plan) => plan.record.filter((file) => file.baseHash !== null));
    const samples = await Promise.all(
      changed.slice(0, LOST_SAMPLES).map(async (file) => {
        const { versions } = await this.port.client.flowDef.fileVersions({
          repo_owner: this.port.repo.owner,
          repo_name: this.port.repo.name,
          flow_path: file.flowPath,
          path: file.path,
          first: FILE_VERSIONS_PAGE_MAX,
        });
        return {
          base: file.baseHash,
          service: file.serviceHash,
          versions: versions.map((version) => ({ hash: version.hash, copy: version.conflict_copy === true })),
        };
      }),
    );
    return wentBackInTime(samples);
  }

  /**
   * A one-shot run (`flowsync sync`, its dry run) looks at the service before it plans: a file changed there is
   * then a conflict the plan leaves out, and the flow's other files go, as the dry run said (a dry run that says
   * "would send 3 files" must not see the service refuse the whole flow for the one file it had changed). Not for
   * a state that synced nothing yet (it learns the service in its first round); a failure is the round's to meet.
   * Returns the conflicts (and files behind) known before it.
   */
  async beforeRun(): Promise<Set<string>> {
    const { state } = this.port;
    // The conflicts known before (and what was behind, which an edit here makes one): the others are this run's.
    const known = new Set(
      [...state.conflicts(this.port.repoId), ...state.behind(this.port.repoId)].map(
        (c) => `${c.flowPath}\0${c.path}`,
      ),
    );
    if (state.hasAcknowledged(this.port.repoId)) await this.check({ round: false }).catch(() => 0);
    return known;
  }
}
