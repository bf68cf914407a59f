import { createHash } from 'node:crypto';
import { FILE_VERSIONS_PAGE_MAX, flowHashInput } from '../protocol/index.ts';
import { recordConflicts } from './conflicts.ts';
import { listServiceFiles, serviceFileKey, type ServiceRepository } from './service-copy.ts';
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
 * The look at the service (issue 41): what it holds against what this checkout acknowledged, every minute (quick:
 * only the flows whose aggregate changed), at each rescan and before a one-shot run. A teammate's edit of a file
 * untouched here is behind, one of a file changed here a conflict; a service that went back in time is said.
 */
export class ServiceCheck {
  /** Each flow's aggregate on the service at the last check (null: no files there), for the quick check. */
  private lastListing: Map<string, string | null> | null = null;
  /** Files on the service this checkout never had, per flow, as the last checks counted them. */
  private unknownByFlow = new Map<string, number>();

  constructor(private readonly port: CheckPort) {}

  /**
   * Compares what the service holds with what this checkout acknowledged, in one `list_flows` call (each flow's
   * aggregate hash) and a listing of each flow that differs: a file the service lost (a wiped database) or holds in
   * another version (a restored backup, another writer, a late duplicate) is a conflict, shown and settled as any;
   * files on the service this checkout never had are counted. Only with a service that lists (flowsync's own);
   * flows sent without an answer, under a held root, are left for their round. Returns the conflicts found.
   */
  async check({ quick = false, round = true } = {}): Promise<number> {
    const { state, client } = this.port;
    if (!(await this.port.takesBases())) return 0;
    const { flows } = await client.flowDef.listFlows({
      repo_owner: this.port.repo.owner,
      repo_name: this.port.repo.name,
    });
    const held = new Set(state.uncertainFlows(this.port.repoId));
    // Quick (the check every minute): only the flows whose aggregate changed on the service since the last check
    // are compared, so a check of an unchanged repository is one call and no read of the state (bench/service-check.ts).
    const last = quick ? this.lastListing : null;
    const listedNow = new Map(flows.map((flow) => [flow.flow_path, flow.files > 0 ? flow.hash : null]));
    const changedThere = (flowPath: string) =>
      last === null || (last.get(flowPath) ?? null) !== (listedNow.get(flowPath) ?? null);
    const skip = (flowPath: string) =>
      held.has(flowPath) || this.port.guard.holds(flowPath) || !changedThere(flowPath);
    const expected = new Map<string, { path: string; hash: string; localHash: string | null }[]>();
    const acknowledged =
      last === null
        ? state.acknowledged(this.port.repoId)
        : [...listedNow.keys(), ...last.keys()]
            .filter((flowPath) => changedThere(flowPath))
            .flatMap((flowPath) =>
              state
                .filesOfFlow(this.port.repoId, flowPath)
                .flatMap((file) => (file.ackedHash === null ? [] : [{ ...file, ackedHash: file.ackedHash }])),
            );
    for (const file of acknowledged) {
      const files = expected.get(file.flowPath) ?? [];
      files.push({
        path: file.path,
        hash: file.ackedHash,
        // A file on disk but not sent (over 1 MiB, binary…) is not deleted here (three-way.ts): changed, as said.
        localHash: file.localHash,
      });
      expected.set(file.flowPath, files);
    }
    const onService = new Map(
      flows.filter((flow) => flow.files > 0).map((flow) => [flow.flow_path, flow.hash]),
    );
    const differing = [...new Set([...expected.keys(), ...onService.keys()])].filter((flowPath) => {
      if (skip(flowPath)) return false;
      const files = expected.get(flowPath);
      const want = files ? createHash('sha256').update(flowHashInput(files)).digest('hex') : null;
      return want !== (onService.get(flowPath) ?? null);
    });
    const compared = new Set(
      [...new Set([...expected.keys(), ...onService.keys()])].filter((flowPath) => !skip(flowPath)),
    );
    const found: Parameters<typeof recordConflicts>[1][number][] = [];
    // Files on the service this checkout never had, per flow: a quick check counts again only the flows it lists.
    const unknownByFlow = new Map(last === null ? [] : this.unknownByFlow);
    for (const flowPath of unknownByFlow.keys())
      if (changedThere(flowPath) && !differing.includes(flowPath)) unknownByFlow.delete(flowPath);
    for (const flowPath of differing) {
      const listed = new Map(
        (await listServiceFiles(client, this.port.serviceRepo(), flowPath)).map((file) => [file.path, file]),
      );
      const acknowledged = expected.get(flowPath) ?? [];
      for (const file of acknowledged) {
        const now = listed.get(file.path);
        if (now?.hash === file.hash) continue;
        found.push({
          flowPath,
          path: file.path,
          baseHash: file.hash,
          serviceHash: now?.hash ?? null,
          sentHash: file.localHash,
          writtenBy: now?.writtenBy ?? null,
          writtenAt: now?.writtenAt ?? null,
        });
      }
      const known = new Set(acknowledged.map((file) => file.path));
      unknownByFlow.set(flowPath, [...listed.keys()].filter((path) => !known.has(path)).length);
    }
    let unknown = 0;
    for (const count of unknownByFlow.values()) unknown += count;
    await this.markLost(found);
    // Recorded in the queue, and only where the state still acknowledges what was compared: a round that ran
    // while the service was listed changed it (its own write, not a conflict).
    let recorded: typeof found = [];
    await this.port.scheduler.run(async () => {
      const acked = new Map<string, Map<string, string | null>>();
      const ackedOf = (flowPath: string) => {
        let files = acked.get(flowPath);
        if (!files) {
          files = new Map(state.filesOfFlow(this.port.repoId, flowPath).map((f) => [f.path, f.ackedHash]));
          acked.set(flowPath, files);
        }
        return files;
      };
      const stillAcked = (c: (typeof found)[number]) => ackedOf(c.flowPath).get(c.path) === c.baseHash;
      recorded = recordConflicts(
        { state, repoId: this.port.repoId, target: this.port.repo },
        found.filter(stillAcked),
      );
      // A file recorded as changed there that the service holds at its base again (a teammate's revert) is no
      // longer behind nor in conflict: what was compared and not found differing is at its base.
      const differs = new Set(found.map((c) => serviceFileKey(c.flowPath, c.path)));
      for (const c of [...state.conflicts(this.port.repoId), ...state.behind(this.port.repoId)])
        if (
          compared.has(c.flowPath) &&
          c.baseHash !== null &&
          !differs.has(serviceFileKey(c.flowPath, c.path)) &&
          stillAcked(c)
        )
          state.settleConflict(this.port.repoId, c.flowPath, c.path, c.baseHash);
    });
    // What was compared now is the point the next quick check starts from; flows left for their round are not.
    const seen = new Map(last ?? []);
    for (const [flowPath, hash] of listedNow) seen.set(flowPath, hash);
    for (const flowPath of last?.keys() ?? []) if (!listedNow.has(flowPath)) seen.delete(flowPath);
    for (const flowPath of [...seen.keys()])
      if (held.has(flowPath) || this.port.guard.holds(flowPath)) seen.delete(flowPath);
    this.lastListing = seen;
    this.unknownByFlow = unknownByFlow;
    if (differing.length > 0 || this.port.notInCheckout.get() !== unknown) {
      this.port.notInCheckout.set(unknown);
      this.port.refresh();
    }
    // Own versions adopted: sent on them now (not from a dry run's plan, whose state is a copy that sends nothing).
    if (found.length > 0 && round) this.port.scheduler.want();
    return recorded.length;
  }

  /**
   * Whether the service went back in time (three-way.ts's wentBackInTime), asked of the history of a few of the
   * files it holds in another version than their base: then none of them is "newer on the service" (taking it would
   * write an older version over what may be the only copy), each is marked `lost`, and the status says it once.
   */
  private async markLost(
    found: {
      flowPath: string;
      path: string;
      baseHash: string | null;
      serviceHash: string | null;
      lost?: boolean;
    }[],
  ): Promise<void> {
    const changed = found.filter((file) => file.baseHash !== null && file.serviceHash !== file.baseHash);
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
          versions: versions.map((version) => version.hash),
        };
      }),
    );
    if (!wentBackInTime(samples)) return;
    for (const file of changed) file.lost = true;
  }

  /**
   * A one-shot run (`flowsync sync`, its dry run) looks at the service before it plans: a file changed there is
   * then a conflict the plan leaves out, and the flow's other files go, as the dry run said (issue 41: it said
   * "would send 3 files", and the service refused the whole flow for the one file it had changed). Not for a state
   * that synced nothing yet (it learns the service in its first round); a failure is the round's to meet. Returns the conflicts (and files behind) known before it.
   */
  async beforeRun(): Promise<Set<string>> {
    const { state } = this.port;
    // The conflicts known before (and what was behind, which an edit here makes one): the others are this run's.
    const known = new Set(
      [...state.conflicts(this.port.repoId), ...state.behind(this.port.repoId)].map(
        (c) => `${c.flowPath}\0${c.path}`,
      ),
    );
    if (state.acknowledgedCount(this.port.repoId) > 0) await this.check({ round: false }).catch(() => 0);
    return known;
  }
}
