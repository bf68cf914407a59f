import { askCapabilities, ProtocolError, type RemoteClient } from '../client/index.ts';
import type { FlowLayout } from './flow-layout.ts';
import { reconcileFlow, whoIsMe, writerSeen, type KnownFile } from './reconcile.ts';
import { ServiceCheck } from './service-check.ts';
import {
  listDeletedFiles,
  listServiceFiles,
  serviceFileKey,
  type ListedServiceFile,
  type ServiceRepository,
} from './service-copy.ts';
import type { ServicePort } from './service-port.ts';
import type { SyncState } from './state.ts';

/**
 * A service that said it takes no bases is asked again after this long: the answer may have been a passing one (a
 * flowsync service's 500 while it starts), and a service can be upgraded in place.
 */
const SPEC_ONLY_RECHECK_MS = 60_000;

/**
 * The round's negotiation with the service (the user's own actions are in service-side.ts): whether it takes
 * bases, what a state that knows nothing learns of it first, what a flow sent without an answer is answered by,
 * and the look at the service (service-check.ts). Each decides by reconcile.ts's plan and carries it out.
 */
export class ServiceRound {
  private readonly options: { state: SyncState; client: RemoteClient };
  private readonly repoId: number;
  private readonly repo: ServicePort['repo'];
  private readonly layout: FlowLayout;
  /** Whether the service takes bases, once asked (and when a "no" was heard, to ask again after a while). */
  private bases: { takes: boolean; at: number } | null = null;
  /** Whether a state that knew nothing learned the service's files (once per engine). */
  private learned = false;
  /** Files on the service that this checkout does not have, as the last look at the service found them. */
  private notInCheckoutCount = 0;
  /** The look at the service: what it holds against what this checkout acknowledged. */
  private readonly checker: ServiceCheck;

  constructor(private readonly port: ServicePort) {
    this.options = { state: port.state, client: port.client };
    this.repoId = port.repoId;
    this.repo = port.repo;
    this.layout = port.layout;
    this.checker = new ServiceCheck({
      ...port,
      takesBases: () => this.takesBases(),
      serviceRepo: () => this.serviceRepo,
      notInCheckout: {
        get: () => this.notInCheckoutCount,
        set: (files) => (this.notInCheckoutCount = files),
      },
    });
  }

  /** When the last look at the service that went through began (ms since the epoch); null: none yet. */
  get lookedAt(): number | null {
    return this.checker.lookedAt;
  }

  /** Files the service holds that this checkout never had, from the last look at the service (0: none, or unknown). */
  get notInCheckout(): number {
    return this.notInCheckoutCount;
  }

  /** The count of files on the service not in this checkout (a settle action changed it), said when it changes. */
  set notInCheckout(files: number) {
    if (files === this.notInCheckoutCount) return;
    this.notInCheckoutCount = files;
    this.port.refresh();
  }

  /** The repository as the service side sees it: its name, and the layout its answers are checked against. */
  get serviceRepo(): ServiceRepository {
    return { owner: this.repo.owner, name: this.repo.name, layout: this.layout };
  }

  /**
   * A state that knows nothing acknowledged (a first sync, a state rebuilt after damage, CI) learns the service's
   * files first, once: a version that is its own (reconcile.ts's isOwnVersion: its id and the very bytes on disk)
   * is its base; any other is not, so an old clone's copy, or an edit made while the state was lost, is a conflict
   * its user settles (a copy kept), never an overwrite.
   * Files on the service that are not in this checkout are counted and said, neither deleted nor fetched.
   */
  async learnService(): Promise<void> {
    const { state, client } = this.options;
    if (this.learned) return;
    this.learned = state.hasAcknowledged(this.repoId);
    if (this.learned) return;
    const me = await whoIsMe(this.repo);
    const listed = await listServiceFiles(client, this.serviceRepo, null);
    this.port.sawWriters(listed.map((file) => writerSeen(file, me)));
    // reconcile.ts's plan, flow by flow: its own versions (the very bytes on disk) become bases; a file here that
    // meets another there is a conflict named now; the rest is counted below.
    const here = new Map<string, KnownFile[]>();
    // Pushed, not spread: a copy per file was quadratic (20,000 files in one flow: no sync in 100 s).
    for (const file of state.fileStates(this.repoId, null)) {
      const files = here.get(file.flowPath) ?? [];
      if (files.length === 0) here.set(file.flowPath, files);
      files.push({ path: file.path, base: file.ackedHash, disk: file.localHash });
    }
    const there = new Map<string, ListedServiceFile[]>();
    for (const file of listed) {
      const files = there.get(file.flowPath) ?? [];
      if (files.length === 0) there.set(file.flowPath, files);
      files.push(file);
    }
    for (const [flowPath, files] of there) {
      const plan = reconcileFlow({
        flowPath,
        files: here.get(flowPath) ?? [],
        listed: files,
        me,
      });
      state.adoptOwnVersions(
        this.repoId,
        plan.adopt.map((file) => ({ flowPath, path: file.path, hash: file.hash, id: file.id ?? '' })),
      );
      state.recordConflicts(this.repoId, plan.record);
    }
    const present = new Set<string>();
    for (const { flowPath, path } of state.presentFiles(this.repoId))
      present.add(serviceFileKey(flowPath, path));
    this.notInCheckout = listed.filter(
      (file) => !present.has(serviceFileKey(file.flowPath, file.path)),
    ).length;
    await this.learnDeletions(listed, present);
    this.learned = true;
  }

  /**
   * A file this checkout has that the service holds as deleted (its latest version a deletion) is deleted on the
   * service for this checkout's first round too: a conflict, never re-created without a word. A checkout made the
   * source (`--source`), renamed or with a fresh state re-uploaded 149 files a teammate had just deleted.
   */
  private async learnDeletions(
    listed: readonly { flowPath: string; path: string }[],
    present: ReadonlySet<string>,
  ): Promise<void> {
    const { state, client } = this.options;
    const onService = new Set(listed.map((file) => serviceFileKey(file.flowPath, file.path)));
    const deleted = (await listDeletedFiles(client, this.serviceRepo)).filter((file) => {
      const key = serviceFileKey(file.flowPath, file.path);
      return present.has(key) && !onService.has(key);
    });
    if (deleted.length === 0) return;
    const local = new Map(
      state
        .fileStates(this.repoId, null)
        .map((file) => [serviceFileKey(file.flowPath, file.path), file.localHash]),
    );
    // Deleted there, on disk here, never synced: raised by this checkout's first round, not a version to own.
    state.recordConflicts(
      this.repoId,
      deleted.map((file) => ({
        flowPath: file.flowPath,
        path: file.path,
        baseHash: null,
        serviceHash: null,
        sentHash: local.get(serviceFileKey(file.flowPath, file.path)) ?? null,
        writtenBy: file.deletedBy,
        writtenAt: file.deletedAt,
        raised: true,
      })),
    );
    this.port.refresh();
  }

  /**
   * Flows sent without an answer (a lost answer, a crash), answered by what the service lists of them: with bases
   * there is no full listing to send whatever the state holds, so the service is asked what it took. A few flows
   * are listed one by one, many by one listing of the repository.
   */
  async answerUnanswered(): Promise<void> {
    const { state, client } = this.options;
    const uncertain = state.uncertainFlows(this.repoId);
    if (uncertain.length === 0) return;
    const me = await whoIsMe(this.repo);
    const listed = new Map<string, Map<string, ListedServiceFile>>(
      uncertain.map((flowPath) => [flowPath, new Map()]),
    );
    const lists =
      uncertain.length <= 20
        ? await Promise.all(uncertain.map((flowPath) => listServiceFiles(client, this.serviceRepo, flowPath)))
        : [await listServiceFiles(client, this.serviceRepo, null)];
    for (const file of lists.flat()) listed.get(file.flowPath)?.set(file.path, file);
    for (const [flowPath, files] of listed) {
      // Sent without an answer: a version of the bytes it sent, under its id, is its own (reconcile.ts).
      const sent = state.sent.of(this.repoId, flowPath);
      const plan = reconcileFlow({
        flowPath,
        files: state.filesOfFlow(this.repoId, flowPath).map((file) => ({
          path: file.path,
          base: file.ackedHash,
          disk: file.localHash,
          ...(sent.has(file.path) ? { sent: sent.get(file.path)! } : {}),
        })),
        listed: [...files.values()],
        me,
      });
      state.answerFromListing(this.repoId, flowPath, plan.adopt);
    }
  }

  async takesBases(): Promise<boolean> {
    const { state, client } = this.options;
    if (this.bases?.takes === true) return true;
    if (this.bases && performance.now() - this.bases.at < SPEC_ONLY_RECHECK_MS) return false;
    const { bases } = await askCapabilities(client);
    if (!bases && state.serviceTakesBases(this.repoId))
      throw new ProtocolError(
        'The service answered that it does not know `capabilities`, which it answered before (another service at ' +
          'this address, or one in front of it?): nothing is sent without bases to a service that took them; retrying.',
        'svc/flow_def/public/capabilities',
        404,
      );
    if (bases) state.rememberServiceTakesBases(this.repoId);
    else state.rememberServiceSpecAlone(this.repoId);
    this.bases = { takes: bases, at: performance.now() };
    return bases;
  }
  /**
   * Compares what the service holds with what this checkout acknowledged (service-check.ts): the conflicts it found.
   * `quick`: only the flows whose aggregate changed since the last check are listed.
   */
  check(
    options: { quick?: boolean; round?: boolean; told?: ReadonlyMap<string, string | null> } = {},
  ): Promise<number> {
    return this.checker.check(options);
  }

  /** A one-shot run looks at the service before it plans (service-check.ts): the conflicts known before it. */
  beforeRun(): Promise<Set<string>> {
    return this.checker.beforeRun();
  }
}
