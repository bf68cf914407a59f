import { Command } from 'commander';
import {
  EMBEDDED_SERVICE,
  configuredRepository,
  pauseOf,
  configuredServiceUrl,
  loadConfig,
  pendingRename,
  readRepositoryStatuses,
  serviceKeyOf,
  repoConfigProblem,
  type AgentConfig,
  type RepositoryStatus,
} from '../../agent/index.ts';
import type { AgentStatus, LookView } from '../../window/index.ts';
import { findRunningAgent, type AgentLockOwner, type BridgeAnswers } from '../../host/index.ts';
import {
  describeFileWarning,
  inSyncOf,
  needsOf,
  stateWord,
  NOT_WATCHED_LINE,
  plural,
  printable,
  printableJson,
  serviceAway,
  specAloneLine,
  warnedPath,
  type SyncPhase,
  type SyncState,
} from '../../protocol/index.ts';
import { storageFaultOf } from '../../host/index.ts';
import { behindLine, lookView, nothingToSync, wentBackLine } from '../../sync/index.ts';
import { statusExit } from '../exit-codes.ts';
import { where } from '../where.ts';
import { clockTime, localTime } from '../local-time.ts';

const LISTED = 5;

export function statusCommand(): Command {
  return new Command('status')
    .description(
      'Says whether an agent runs (its pid and window address), then reads the agent state (also while\n' +
        '`flowsync start` runs) and shows each repository of the config file as synced with the current\n' +
        'service (the one `flowsync start` would use). --all adds what is kept for services used before.\n' +
        '--json prints the repositories only. It looks at the service first (the running agent does, else\n' +
        'status itself, waiting at most 5 s), so "newer on the service" is as of now. Exits 4 when something\n' +
        'waits for you in a repository of the current service (files in conflict, deletions held, files on the\n' +
        'service not in this checkout, an invalid .flowsync/repo-config.json: the running agent knows the\n' +
        'deletions and those files), 3 when the service could not be reached now, 5 when files are newer on\n' +
        'the service (`flowsync resolve --newer` takes them), else 0.',
    )
    .option('--all', 'also show the entries kept for other services')
    .option('--json', 'print as JSON')
    .option(
      '--url <url>',
      "the current service (default: $FLOWSYNC_URL, else the config file's serviceUrl, else the embedded one)",
    )
    .addHelpText(
      'after',
      '\nExamples:\n  $ flowsync status\n  $ flowsync status --all\n' +
        '  $ flowsync status --json | jq ".[].counts.pending"',
    )
    .action(async (options: { json?: boolean; all?: boolean; url?: string }) => {
      const running = await findRunningAgent(windowAnswers);
      const config = loadConfig();
      const configured = configuredServiceUrl(options.url, config);
      const service = serviceKeyOf(configured);
      // Who the service takes you for, asked alongside the look (a configured service only: the embedded one is
      // yours alone, and a status with no service set loads no client for it).
      const identity =
        configured && !options.json
          ? import('./status-identity.ts').then(({ identityLines }) => identityLines(configured))
          : Promise.resolve([]);
      const folders = config.repositories.map((repo) => repo.path);
      // The running agent knows what its state file cannot say (changes it could not record there): its word wins.
      // Asked to look at the service first: "newer on the service" as of now, not of its last look.
      const agentView = await liveStatus(running);
      const live = agentView?.repositories ?? [];
      const read = () => {
        try {
          return readRepositoryStatuses({ folders, service }, undefined, {
            runningAgentPid: running?.pid ?? null,
          });
        } catch (error) {
          // The state file cannot be opened (its folder read-only, full…): the running agent's view is all there is.
          if (storageFaultOf(error) === null || live.length === 0) throw error;
          return live.map((repository) => fromLive(repository, service));
        }
      };
      let every: RepositoryStatus[] = read();
      const looks = new Map((agentView?.looks ?? []).map((look) => [look.root, look]));
      // The renames the look found opening its repositories: not asked of git a second time.
      const renames = new Map<string, string | null>();
      if (!running && service !== EMBEDDED_SERVICE) {
        // No agent: status looks itself, at what synced with the current service, and reads again what it recorded.
        // (The embedded service runs inside the agent: with none running, nobody wrote there since it stopped.)
        const synced = every.filter(
          (status) => status.current && (status.lastSyncAt !== null || status.counts.files > 0),
        );
        if (synced.length > 0) {
          const { lookWithoutAgent } = await import('./status-look.ts');
          const found = await lookWithoutAgent(
            config,
            options.url,
            synced.map((status) => status.root),
            windowAnswers,
          );
          for (const [root, look] of found) {
            looks.set(root, lookView(root, look));
            if (look.rename !== undefined) renames.set(root, look.rename);
          }
          every = read();
        }
      }
      const agent = agentOf(running);
      const statuses = await Promise.all(
        (options.all ? every : every.filter((status) => status.current)).map(async (status) =>
          withVerdict(
            withNothing(
              withPaused(await withRename(withLive(status, live), config, renames), config),
              config,
            ),
            agent,
            status.current ? looks.get(status.root) : undefined,
          ),
        ),
      );
      // A repository the running agent knows but the state does not (its folder was never there yet: missing).
      for (const repository of live)
        if (!every.some((status) => status.current && status.root === repository.root))
          statuses.push(
            withVerdict(
              withNothing(
                withPaused({ ...withLive(fromLive(repository, service), live), rename: null }, config),
                config,
              ),
              agent,
              looks.get(repository.root),
            ),
          );
      // What waits for you decided by needsOf, as the tray, the window's badge and `start`'s lines decide it; then a
      // service not reached now, then files newer there (statusExit): never "in sync" and 0 over any of them.
      process.exitCode = statusExit(
        statuses
          .filter((status) => status.current)
          .map((status) => ({
            waiting: status.waiting.length > 0,
            notReached: status.serviceReached === false,
            away: status.phase !== null && serviceAway(status.phase),
            behind: status.counts.behind,
          })),
      );
      if (options.json) {
        process.stdout.write(`${printableJson(statuses)}\n`);
        return;
      }
      const identified = await identity;
      if (identified.length > 0) process.stdout.write(`${identified.map(printable).join('\n')}\n`);
      process.stdout.write(`${printable(describeAgent(running))}\n\n`);
      // Said once: what the current service lacks, as the running agent knows it, else as the state remembers it.
      const limits =
        agentView?.serviceLimits ??
        (statuses.some((status) => status.current && status.specAlone)
          ? specAloneLine(serviceName(service))
          : null);
      if (limits) process.stdout.write(`${printable(limits)}\n\n`);
      const shown = statuses.filter((status) => status.current);
      if (shown.length === 0) {
        const none =
          folders.length === 0
            ? 'No repositories yet'
            : `No repositories synced with ${serviceName(service)} yet`;
        process.stdout.write(`${printable(none)}: \`npm start -- <folder>\` adds one.\n`);
      }
      const lines = statuses.map(describe);
      if (lines.length > 0) process.stdout.write(`${shown.length === 0 ? '\n' : ''}${lines.join('\n\n')}\n`);
      const others = every.length - shown.length;
      if (!options.all && others > 0) {
        const entries = others === 1 ? '1 entry for another service' : `${others} entries for other services`;
        process.stdout.write(`\n${entries}: flowsync status --all\n`);
      }
    });
}

type LiveRepository = AgentStatus['repositories'][number];

/**
 * The window layer (its bridge's client and the schemas of what it answers) is loaded only when the lock names a
 * live agent to ask: with none running, `status` never needs it, and its 350 schemas were the largest part of
 * what the command loaded (about 60 million instructions of 440).
 */
const window = () => import('../../window/index.ts');

const windowAnswers: BridgeAnswers = async (bridge) => (await window()).bridgeAnswers(bridge);

/**
 * The running agent's own view of its repositories, through its window's bridge, once it looked at the service
 * (lookNow: at most 5 s); empty when none answers.
 */
async function liveStatus(
  running: AgentLockOwner | null,
): Promise<(AgentStatus & { looks?: LookView[] }) | null> {
  if (!running?.bridge) return null;
  const [{ AGENT_API, agentStatusSchema }, { runningAgentBridge }] = await Promise.all([
    window(),
    import('../agent-bridge.ts'),
  ]);
  const bridge = runningAgentBridge({ ...running, bridge: running.bridge });
  try {
    return AGENT_API.lookNow.output.parse(await bridge.call('lookNow', {}));
  } catch {
    // An agent of an older flowsync (no lookNow): its status, as it knows it.
  }
  try {
    return agentStatusSchema.parse(await bridge.call('status', {}));
  } catch {
    return null; // an agent that does not answer: what its state file says is all there is
  }
}

function fromLive(repository: LiveRepository, service: string): RepositoryStatus {
  const { root, owner, name, branch, counts, lastSyncAt, rejected } = repository;
  const warnings = repository.warnings.map(({ flowPath, path, warning }) => ({ flowPath, path, warning }));
  return {
    root,
    service,
    current: true,
    owner,
    name,
    branch,
    counts,
    lastSyncAt,
    lastError: null,
    warnings,
    rejected,
  };
}

/** The file's status with the running agent's counts, phase and message for the current service. */
function withLive(status: RepositoryStatus, live: LiveRepository[]): RepositoryStatus & LiveFacts {
  const repository = status.current ? live.find((repo) => repo.root === status.root) : undefined;
  // The file read here (an invalid hand edit shows with or without an agent), else a conflict with a teammate's
  // newer config: the running agent's, or the state's when none runs.
  const configProblem = status.current
    ? (repoConfigProblem(status.root) ?? repository?.configProblem ?? status.repoConfig ?? null)
    : null;
  // Without a running agent, held deletions and the files not in this checkout are not known: the state has them not.
  const facts = {
    configProblem,
    heldDeletions: repository?.heldDeletions ?? 0,
    notInCheckout: repository?.notInCheckout ?? 0,
    gitChanges: repository?.gitChanges ?? [],
  };
  const counts = repository?.counts ?? status.counts;
  const waiting = needsOf({ ...facts, counts }).map((need) => need.words);
  // No agent watches it: the state's counts are all there is, and the disk may differ from them (inSyncOf).
  if (!repository) return { ...status, ...facts, phase: null, waiting };
  return { ...status, ...facts, phase: repository.phase, message: repository.message, counts, waiting };
}

interface LiveFacts {
  /** The running agent's phase for it; null when no agent watches it (none runs, or it is another service's). */
  phase: SyncPhase | null;
  message?: string | null;
  heldDeletions: number;
  notInCheckout: number;
  /** Git's change sets held for their user, as the running agent knows them. */
  gitChanges: { name: string; changed: number; deleted: number }[];
  configProblem: string | null;
  /** What waits for its user (needsOf's words); empty when nothing does. */
  waiting: string[];
}

/**
 * The status with the rename waiting for it, if its origin (or the config) names it otherwise now: `rename` is the
 * line that says what to do, null when there is none (or the folder cannot be read now). `found`: what the look
 * found opening the current service's repositories, said as it is rather than asked of git again.
 */
async function withRename<T extends RepositoryStatus>(
  status: T,
  config: AgentConfig,
  found: ReadonlyMap<string, string | null>,
): Promise<T & { rename: string | null }> {
  const known = status.current ? found.get(status.root) : undefined;
  if (known !== undefined) return { ...status, rename: known };
  const configured = configuredRepository(config, status.root);
  const renamed = await pendingRename(status, configured).catch(() => null);
  return { ...status, rename: renamed?.message ?? null };
}

/**
 * Whether its user paused the repository (the config says so, for the running agent too): `pausedSince` is when,
 * null when an older flowsync paused it without saying.
 */
function withPaused<T extends RepositoryStatus>(
  status: T,
  config: AgentConfig,
): T & { paused: boolean; pausedSince: string | null } {
  const pause = pauseOf(configuredRepository(config, status.root));
  return { ...status, paused: pause !== null, pausedSince: pause?.since ?? null };
}

/**
 * The status with the line that says none of its flow folders is there (`nothingToSync`: the agent's own rule, on
 * the folders of its config entry), null otherwise: "0 flows, 0 files" alone reads as in sync.
 */
function withNothing<T extends RepositoryStatus>(
  status: T,
  config: AgentConfig,
): T & { nothingToSync: string | null } {
  const flowRoots = configuredRepository(config, status.root)?.flowRoots ?? ['flows'];
  // Files synced before (gone now: pending deletions): the roots are held, which the agent says as `missing`.
  const synced = status.counts.files + status.counts.pending > 0;
  return { ...status, nothingToSync: synced ? null : nothingToSync(status.root, flowRoots) };
}

/** Whether an agent runs, as `status` says it first (describeAgent): `flowsync sync` holding the lock is none. */
type AgentWord = 'running' | 'starting' | 'not running';

function agentOf(running: AgentLockOwner | null): AgentWord {
  if (!running || running.command === 'sync') return 'not running';
  return running.bridge ? 'running' : 'starting';
}

/**
 * The status with the one verdict on it (inSyncOf, as `start`, the window and the tray decide it): `inSync` only
 * when an agent watches it, nothing differs and the look at the service made now went through; with no agent,
 * `syncState` is `not watched` and `reason` says that edits since its last sync are not counted (`status` does not
 * read the disk: it stays cheap). `look`: the look at the service made for this status, if one was.
 */
function withVerdict<
  T extends RepositoryStatus & LiveFacts & { paused: boolean; nothingToSync: string | null },
>(status: T, agent: AgentWord, look: LookView | undefined): T & VerdictFacts {
  const notReached = look?.failure != null ? { since: look.at === null ? null : clockTime(look.at) } : null;
  const verdict = inSyncOf({ ...status, phase: status.current ? status.phase : null, notReached });
  // The nothing-to-sync line is said on its own; the running agent's message starts with it then.
  const message =
    status.message && !(status.nothingToSync && status.message.startsWith(status.nothingToSync))
      ? status.message
      : null;
  return {
    ...status,
    agent,
    now:
      status.current && status.phase !== null
        ? `${stateWord(verdict.state)}${message ? `: ${message}` : ''}`
        : null,
    inSync: verdict.inSync,
    syncState: verdict.state,
    reason: verdict.inSync ? null : verdict.line,
    newerOnService: status.counts.behind,
    lookedAt: look?.at ?? null,
    serviceReached: look === undefined ? null : look.fresh ? true : look.failure !== null ? false : null,
    notReachedBecause: look?.failure ?? null,
  };
}

interface VerdictFacts {
  agent: AgentWord;
  /**
   * The state in the word the window's badge and the tray use (stateWord), with the running agent's message
   * (`waiting for you: 3 files on the service are not in this checkout …`); null when no agent watches it.
   */
  now: string | null;
  inSync: boolean;
  syncState: SyncState;
  reason: string | null;
  /** Files newer on the service, untouched here (`counts.behind`, named for scripts): status exits 5 for them. */
  newerOnService: number;
  /** When the last look at the service went through (ISO), as the look made for this status says; else null. */
  lookedAt: string | null;
  /** Whether the look made for this status saw the service: false when it got no answer, null when none was made. */
  serviceReached: boolean | null;
  /** Why the service was not reached now (the look's error), else null. */
  notReachedBecause: string | null;
}

function serviceName(service: string): string {
  return service === EMBEDDED_SERVICE ? 'the embedded service' : service;
}

function describeAgent(running: AgentLockOwner | null): string {
  if (!running) return 'Agent: not running (`npm start` starts it).';
  if (running.command === 'sync')
    return `Agent: not running; \`flowsync sync\` is running (pid ${running.pid}).`;
  const since = `since ${localTime(running.startedAt)}`;
  // The lock's address carries the agent token: only its origin is shown, and `ui --open` opens a window.
  return running.bridge
    ? `Agent: running (pid ${running.pid}, ${since}), window ${new URL(running.bridge).origin}/ ` +
        '(`flowsync ui --open` opens it)'
    : `Agent: starting (pid ${running.pid}, ${since}); its window opens after the first sync.`;
}

function describe(
  status: RepositoryStatus &
    LiveFacts & {
      rename: string | null;
      paused: boolean;
      pausedSince: string | null;
      nothingToSync: string | null;
    } & VerdictFacts,
): string {
  const { flows, files, pending, pendingFlows, warnings } = status.counts;
  // Not watched: the state's count is what was pending at its last look; edits since are not in it.
  const unknown = status.current && status.phase === null;
  const pendingWords =
    unknown && pending === 0
      ? 'pending not known'
      : `${unknown ? 'at least ' : ''}${pending} pending${pending > 0 ? ` in ${plural(pendingFlows, 'flow')}` : ''}`;
  const lines = [
    `${where(status, status.branch)}  ${status.root}  ` +
      `(${serviceName(status.service)}, ${status.current ? 'current service' : 'another service'})`,
    `  ${plural(flows, 'flow')}, ${plural(files, 'file')}, ${pendingWords}, ` +
      `${warnings} not sent, last sync ${status.lastSyncAt ? localTime(status.lastSyncAt) : 'never'}`,
  ];
  if (unknown) lines.push(`  ${NOT_WATCHED_LINE}`);
  // The state's word, as the badge and the tray say it: "0 pending" alone read as in sync (it says nothing of
  // conflicts, files newer on the service, or a look at the service that got no answer).
  if (status.now) lines.push(`  now: ${status.now}`);
  if (status.paused && status.current)
    lines.push(
      `  paused${status.pausedSince ? ` since ${localTime(status.pausedSince)}` : ''}: nothing is sent until ` +
        `\`flowsync resume ${status.root}\`${pending > 0 ? ` (${plural(pending, 'change')} waiting)` : ''}`,
    );
  if (status.nothingToSync) lines.push(`  ${status.nothingToSync}`);
  if (status.current && status.waiting.length > 0)
    lines.push(`  waiting for you: ${status.waiting.join(', ')}`);
  if (status.configProblem) lines.push(`  ${status.configProblem}`);
  // The look at the service made now got no answer: "in sync" only as of the last one, said with why.
  if (status.current && status.serviceReached === false) {
    const because = status.notReachedBecause ? ` (${status.notReachedBecause})` : '';
    lines.push(
      status.syncState === 'not reached'
        ? `  ${status.reason ?? ''}${because}`
        : `  the service could not be reached now${because}: what is newer there is as its last look found it`,
    );
  }
  // Disk and service differ: said, never left to read as in sync; "your changes are sent" only when
  // the verdict is behind (an agent watches it and nothing else differs).
  const wentBack = status.current ? wentBackLine(status.lost ?? 0) : null;
  if (wentBack !== null) lines.push(`  ${wentBack}`);
  const newer = behindLine(status.newer ?? [], status.root);
  if (newer !== null && status.current)
    lines.push(`  ${status.syncState === 'behind' ? 'your changes are sent; ' : ''}${newer}`);
  if (status.rename) lines.push(`  ${status.rename}`);
  for (const warning of status.warnings.slice(0, LISTED)) {
    lines.push(`  not sent: ${warnedPath(warning)}: ${describeFileWarning(warning.warning)}`);
  }
  if (status.warnings.length > LISTED) lines.push(`  … and ${status.warnings.length - LISTED} more not sent`);
  for (const rejected of status.rejected)
    lines.push(`  refused by the service: ${rejected.flowPath}: ${rejected.message}`);
  if (status.lastError) lines.push(`  last error: ${status.lastError}`);
  // Names, paths and the service's messages come from outside: each line is printed as one line of text.
  return lines.map(printable).join('\n');
}
