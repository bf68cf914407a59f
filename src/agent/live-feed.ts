import { setTimeout as sleep } from 'node:timers/promises';
import {
  SIGNED_OUT_RECHECK_MS,
  backoffDelay,
  credentialRefusal,
  failureKind,
  type RemoteClient,
} from '../client/index.ts';
import { tunable } from '../host/index.ts';
import { CHANGES_REPOS_MAX, CHANGES_WAIT_MAX_MS, type ChangesValue } from '../protocol/index.ts';

/** A repository the feed watches, and what it tells it. */
export interface LiveRepository {
  owner: string;
  name: string;
  /** These flows were written on the service (each with its aggregate there now; null: no files). */
  changed(flows: [string, string | null][]): void;
  /** The feed cannot say what changed (its first answer, a gap): every flow is looked at once. */
  unknown(): void;
}

/**
 * How long the service holds a call when nothing changes: under its 30-s idle time-out, with room
 * ($FLOWSYNC_LIVE_WAIT_MS: a test of a service that hangs shrinks it).
 */
const WAIT_MS = Math.min(tunable('FLOWSYNC_LIVE_WAIT_MS', CHANGES_WAIT_MAX_MS), CHANGES_WAIT_MAX_MS);
/**
 * The feed is live while its last answer is at most this much older than the longest the service holds a call:
 * a service that stopped answering (frozen, or cut off without a word) is not "live" for longer than that.
 */
const LIVE_MARGIN_MS = 5_000;
/** Between two calls answered with nothing, at least this (a service that answers at once must not be a busy loop). */
const EMPTY_SPACING_MS = 1_000;
/** Between two calls answered with changes (a burst, or a service that names changes without end). */
const CHANGED_SPACING_MS = 250;
/**
 * Between two looks at every flow for a gap: a gap is a first call or a long outage, so a service that says there
 * is one at every answer gets one look in this time, not one a second.
 */
const GAP_LOOK_SPACING_MS = 30_000;
/** Waits after a failed call: from the first, doubled, up to the last (and Retry-After's, when the service asks). */
const RETRY_FIRST_MS = 1_000;
const RETRY_MAX_MS = 30_000;

/**
 * The agent's one long call to its service (capabilities `live_changes`): the service answers it as soon as a flow
 * of one of the agent's repositories is written, the engine of that repository looks at those flows (only), and the
 * feed calls again from the answer's cursor. A cut connection (the service restarted, killed, the network down) is
 * a failed call, sent again with a back-off from the same cursor, so nothing written meanwhile is missed and nothing
 * is listed whole again; a gap the cursor cannot cover is one look at every flow. While it is connected, the engines
 * leave out their look every 45 s (`live`), which is most of what 50 idle agents cost a service (bench/live.ts).
 */
export class LiveFeed {
  private cursor: string | null = null;
  private lastAnswer: number | null = null;
  private lastGapLook = -Infinity;
  private failures = 0;
  private readonly stopping = new AbortController();
  private running: Promise<void> | null = null;
  /** Set when the service refused the feed itself: the engines look every 45 s as with a service of the spec. */
  refused = false;

  constructor(
    private readonly client: RemoteClient,
    private readonly repositories: () => LiveRepository[],
    private readonly now: () => number = () => performance.now(),
  ) {}

  /**
   * Whether every write is told now: the last call was answered (not failed since) within the time the service may
   * hold one, and a margin.
   */
  get live(): boolean {
    return (
      !this.refused &&
      this.failures === 0 &&
      this.lastAnswer !== null &&
      this.now() - this.lastAnswer < WAIT_MS + LIVE_MARGIN_MS
    );
  }

  start(): void {
    this.running ??= this.run().catch(() => undefined);
  }

  async stop(): Promise<void> {
    this.stopping.abort();
    await this.running;
  }

  private async run(): Promise<void> {
    const signal = this.stopping.signal;
    while (!signal.aborted && !this.refused) {
      const repositories = this.repositories().slice(0, CHANGES_REPOS_MAX);
      if (repositories.length === 0) {
        await sleep(EMPTY_SPACING_MS, undefined, { signal }).catch(() => undefined);
        continue;
      }
      const asked = this.now();
      let answer: ChangesValue;
      try {
        answer = await this.client.flowDef.changes(
          {
            repos: repositories.map((repo) => ({ repo_owner: repo.owner, repo_name: repo.name })),
            after: this.cursor,
            wait_ms: this.cursor === null ? 0 : WAIT_MS,
          },
          { timeoutMs: WAIT_MS + 15_000, signal },
        );
      } catch (error) {
        if (signal.aborted) return;
        await this.failed(error, signal);
        continue;
      }
      this.failures = 0;
      this.lastAnswer = this.now();
      const advanced = answer.cursor !== this.cursor;
      this.cursor = answer.cursor;
      this.tell(repositories, answer);
      // A cursor that did not move while more is said to wait is not followed at once (a service that loops).
      const spacing =
        answer.more && advanced ? 0 : answer.changes.length > 0 ? CHANGED_SPACING_MS : EMPTY_SPACING_MS;
      const left = spacing - (this.now() - asked);
      if (left > 0) await sleep(left, undefined, { signal }).catch(() => undefined);
    }
  }

  /** Each repository is told its flows, or, after a gap, to look at them all. Changes of others are not its. */
  private tell(repositories: readonly LiveRepository[], answer: ChangesValue): void {
    if (answer.gap) {
      if (this.now() - this.lastGapLook < GAP_LOOK_SPACING_MS) return;
      this.lastGapLook = this.now();
    }
    for (const repo of repositories) {
      if (answer.gap) {
        repo.unknown();
        continue;
      }
      const flows = answer.changes
        .filter((change) => change.repo_owner === repo.owner && change.repo_name === repo.name)
        .map((change): [string, string | null] => [change.flow_path, change.hash]);
      if (flows.length > 0) repo.changed(flows);
    }
  }

  /**
   * A call that failed: the service refusing the feed itself ends it (the engines' own looks go on); anything else
   * (down, restarting, throttled, a token to renew) is waited for, longer each time, and the call sent again from
   * the same cursor.
   */
  private async failed(error: unknown, signal: AbortSignal): Promise<void> {
    const kind = failureKind(error);
    if (kind === 'refused' || kind === 'invalid') {
      this.refused = true;
      return;
    }
    this.failures++;
    // A member's token that is over: one call a minute notices a new sign-in; nothing sooner would help.
    const wait =
      credentialRefusal(error) !== null
        ? SIGNED_OUT_RECHECK_MS
        : backoffDelay(this.failures - 1, RETRY_FIRST_MS, RETRY_MAX_MS);
    await sleep(wait, undefined, { signal }).catch(() => undefined);
  }
}
