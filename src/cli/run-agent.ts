/**
 * The agent as `flowsync start` and `flowsync ui` run it (src/cli/commands/start.ts defines the commands).
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import {
  Agent,
  configuredRepository,
  currentBranch,
  keyLineAtStart,
  loadConfig,
  saveConfig,
  TokenRenewal,
  withRepository,
  type AgentConfig,
  type WatchedRepository,
} from '../agent/index.ts';
import {
  activityOf,
  announceReady,
  createAgentApi,
  startBridge,
  statusEvents,
  type Bridge,
} from '../window/index.ts';
import {
  defaultDataFolder,
  keepMemoryLow,
  type AgentLock,
  logUnexpected,
  privateSocketPlace,
  rendererDir,
} from '../host/index.ts';
import { SECRET_ENV_VARS } from '../secrets/index.ts';
import { plural, printable } from '../protocol/index.ts';
import type { SyncProgress } from '../sync/index.ts';
import { SignalPhases } from './signal-phases.ts';
import { ProgressDisplay } from './progress.ts';
import { NO_PRIVATE_SOCKET } from './agent-bridge.ts';
import { becomeAgentOrHandOver } from './running-agent.ts';
import { UsageError } from './usage-error.ts';
import { waitForDataFolder } from './wait-for-data-folder.ts';
import { showWindow } from './window-address.ts';
import { where } from './where.ts';
import { followActivity, followRepositories, followStatus } from './terminal-follow.ts';
import { notReachedOf, stopLine } from './terminal-lines.ts';

type Out = (line: string) => void;

/** What `start` and `ui` were asked for on the command line. */
export interface RunOptions {
  url?: string;
  uiPort: number;
  open?: boolean;
  source?: boolean;
  rename?: boolean;
}

/**
 * The agent as `start` and `ui` run it, until a signal: it announces itself, adds the repositories, serves the
 * window, syncs them all once, then follows them on the terminal and stops cleanly at Ctrl-C.
 */
export async function runAgent(
  folders: string[],
  options: RunOptions,
  needsRepository: boolean,
): Promise<void> {
  // Lines quote file and repository names and the service's messages: their control characters are spelled out.
  // Through the progress display: a line said while its bar is drawn goes on a line of its own.
  const progress = new ProgressDisplay(process.stdout);
  const out = (line: string) => progress.line(printable(line));
  await waitForDataFolder(out);
  const lock = await becomeAgentOrHandOver(
    needsRepository ? 'start' : 'ui',
    folders,
    out,
    options.open === true,
    { source: options.source === true, rename: options.rename === true },
  );
  if (!lock) return;
  // What a first pass, a burst or a large listing took is given back once the agent is at rest (docs/memory.md).
  keepMemoryLow();
  // Until the agent runs, Ctrl-C ends the process at once, as it would without a handler; exiting releases the lock.
  const signals = new SignalPhases((signal) => process.exit(signal === 'SIGINT' ? 130 : 143));

  const config = configWithFolders(folders, options, needsRepository);
  const agent = await Agent.open({ config, serviceUrl: options.url, persistConfig: true });
  if (agent.embedded) lock.setService(agent.serviceUrl, agent.embedded.socketPath);
  announce(agent, config, out);
  // A member token from the keychain is renewed before it expires, while the agent runs (the embedded service's
  // tokens are the agent's own, for this run only).
  const renewal = agent.embedded
    ? null
    : new TokenRenewal({
        client: agent.client,
        secrets: agent.secrets,
        secretsUrl: agent.secretsUrl,
        say: out,
      });
  renewal?.start();
  // Recent activity from the start, so that the first sync is in the window's list too, and what the last run's
  // list held (kept in the data folder) before it.
  const activity = activityOf(agent, defaultDataFolder());
  await addRepositories(agent, folders, options, out);
  const bridge = await serveWindow(agent, options, lock, out);
  await firstSync(agent, progress);
  const configLines = followRepositories(agent, out);
  await agent.watchAll();
  // Said once, at start: what this service cannot protect (nothing, for flowsync's own).
  const limits = await agent.serviceInfo.limits();
  if (limits) out(limits);
  followActivity(agent, activity, out);
  followStatus(agent, out);
  await stopOnSignal({ agent, signals, lock, bridge, renewal, configLines, out });
}

/** The config with these folders added (saved when that changed); refused when there is nothing to run. */
function configWithFolders(folders: string[], options: RunOptions, needsRepository: boolean): AgentConfig {
  let config = loadConfig();
  // A rename is of a repository synced before: a folder new to flowsync has no old name (and is not added here).
  const unknown = options.rename
    ? folders.find((folder) => !configuredRepository(config, folder))
    : undefined;
  if (unknown !== undefined)
    throw new UsageError(`--rename: ${unknown} is not synced yet; \`flowsync start ${unknown}\` adds it.`);
  const before = JSON.stringify(config);
  for (const folder of folders) config = withRepository(config, folder);
  if (JSON.stringify(config) !== before) saveConfig(config);
  if (needsRepository && config.repositories.length === 0) {
    throw new UsageError('No repository yet: give its folder, e.g. `npm start -- ~/code/app`.');
  }
  return config;
}

/** The first lines: which service, what the agent noticed at start, and (when it answers) who the user is. */
function announce(agent: Agent, config: AgentConfig, out: Out): void {
  out(`flowsync: syncing with ${agent.serviceUrl}${agent.embedded ? ' (the embedded service)' : ''}`);
  if (agent.notice) out(agent.notice.line);
  // One line at a time: out() spells a newline inside a line out as \n.
  if (agent.notice?.forTerminal && process.stdout.isTTY) agent.notice.forTerminal.split('\n').forEach(out);
  // Not waited for: a service that does not answer (a dead VPN) delayed the start 30 s before anything was synced.
  void sayWhoYouAre(
    agent,
    out,
    config.repositories.map((repository) => repository.path),
  ).catch(logUnexpected('saying who you are to the tracker'));
}

/** The repositories of the config, renamed or made the source first when asked; a line for each not synced. */
async function addRepositories(
  agent: Agent,
  folders: string[],
  options: RunOptions,
  out: Out,
): Promise<void> {
  if (options.rename) {
    for (const folder of folders) {
      const { from, to } = await agent.rename(folder, { source: options.source === true });
      out(
        `${where(to, currentBranch(to.root), to.root)}: synced under its new name from now on; ` +
          `${from.owner}/${from.name}'s files stay on the service (its history keeps them)`,
      );
    }
  } else if (options.source) for (const folder of folders) await agent.makeSource(folder);
  await agent.addConfigured();
  // A checkout of a repository that another checkout is synced from: listed, not synced, with how to switch. A
  // folder that is not there (a drive not mounted): missing, synced once it appears. A repository whose origin
  // renamed it: synced under the old name, with how to move it.
  for (const root of agent.roots()) {
    const described = agent.describe(root);
    if (described?.reason) out(`${where(described, described.branch, root)}: ${described.reason}`);
    else if (described?.status?.phase === 'missing' && agent.missing().includes(root))
      out(`${where(described, described.branch, root)}: missing: ${described.status.message}`);
    if (described?.rename) out(described.rename.message);
  }
}

/**
 * The window, before the first sync: a service slow to answer, or one whose listing never ends, must not keep it
 * from appearing (its screens say what the sync does meanwhile).
 */
async function serveWindow(agent: Agent, options: RunOptions, lock: AgentLock, out: Out): Promise<Bridge> {
  const api = createAgentApi(agent);
  // What an older flowsync kept for its window's next run (its port, its sessions' digests): no run uses it now.
  rmSync(join(defaultDataFolder(), 'window.json'), { force: true });
  const bridge = await startBridge({
    api,
    subscribe: statusEvents(agent, api),
    port: options.uiPort,
    socket: privateSocketPlace(defaultDataFolder(), 'agent.sock'),
    staticDir: rendererDir(),
  });
  lock.setBridge(bridge.agentUrl, bridge.socketPath);
  if (bridge.socketPath === null && process.platform !== 'win32') out(NO_PRIVATE_SOCKET);
  // A browser that cannot be opened does not stop the agent: the line says so, and the agent runs on.
  out(
    await showWindow(bridge.address, bridge.launchUrl, options.open === true).catch(
      (error: Error) => `Window: ${bridge.address} (${error.message})`,
    ),
  );
  // The agent's address as a message, for a parent that started us (the desktop app): no scraping of a line.
  await announceReady(bridge.agentUrl);
  return bridge;
}

/** The first sync of every repository, with a progress bar: after it, each sync is one line. */
async function firstSync(agent: Agent, progress: ProgressDisplay): Promise<void> {
  const showProgress = ({ identity }: WatchedRepository, { stage, done, total }: SyncProgress) =>
    progress.update(
      `${where(identity, currentBranch(identity.root))}: ${stage === 'hashing' ? 'hashing files' : 'uploading flows'}`,
      done,
      total,
    );
  agent.on('progress', showProgress);
  await agent.syncAll({ watchFirst: true });
  agent.off('progress', showProgress);
  progress.stop();
}

interface Running {
  agent: Agent;
  signals: SignalPhases;
  lock: AgentLock;
  bridge: Bridge;
  renewal: TokenRenewal | null;
  /** What each repository-config line said last (followRepositories). */
  configLines: ReadonlyMap<string, string | null>;
  out: Out;
}

/**
 * Waits for Ctrl-C (or SIGTERM), then stops every part and says whether everything was in sync, after a look at
 * the service.
 */
async function stopOnSignal({
  agent,
  signals,
  lock,
  bridge,
  renewal,
  configLines,
  out,
}: Running): Promise<void> {
  // Stopping takes well under a second; if a part ever hangs, a second Ctrl-C or 15 s end the process anyway,
  // saying which part it was (nothing pending is lost: the state is the outbox).
  let stage = 'reading the state';
  const force = () => {
    process.stderr.write(`flowsync: stopping hung while ${stage}; exiting anyway.\n`);
    process.exit(1);
  };
  // Ready for Ctrl-C before the line that invites it is printed.
  const stopping = new Promise<void>((resolve) =>
    signals.set(() => {
      signals.set(force);
      process.stderr.write('\nStopping…\n');
      resolve();
    }),
  );
  const missing = agent.missing().length;
  out(
    `Watching ${plural(agent.watched().length, 'repository', 'repositories')}` +
      `${missing > 0 ? ` (${missing} missing)` : ''}. Press Ctrl-C to stop.`,
  );
  await stopping;
  setTimeout(force, 15_000).unref();
  // "Everything was in sync" only after a look at the service (a teammate's edit a second before Ctrl-C
  // was not seen, and the line said it all was): at most STOP_LOOK_MS, and what it finds is said.
  stage = 'looking at the service';
  const looks = new Map(
    (await agent.lookNow(undefined, { waitMs: STOP_LOOK_MS })).map(({ watched, look }) => [watched, look]),
  );
  // Read before the engines stop (a stopped engine watches nothing, which is never in sync).
  const atStop = stopLine(
    agent.watched().map((watched) => ({
      ...watched.engine.status(),
      owner: watched.identity.owner,
      name: watched.identity.name,
      configProblem: configLines.get(watched.identity.root) ?? null,
      newer: watched.engine.service.newer(),
      notReached: notReachedOf(looks.get(watched)),
    })),
  );
  renewal?.stop();
  stage = 'closing the window';
  await bridge.close();
  stage = 'stopping the sync engines, the hasher and the embedded service';
  // A request the service has not answered yet is not waited for: its flows are in the state's `in_flight`, sent
  // again as full listings at the next start. Waiting for it delayed Ctrl-C up to the 15 s guard (a frozen service).
  const closed = await endsWithin(agent.close(), STOP_MS);
  activityOf(agent).keep();
  lock.release();
  out(atStop);
  // Not closed: the unanswered request and what waits on it would keep the process alive. (A flow sent and not
  // answered counts as pending, so the line above never says "in sync" then.)
  if (!closed) process.exit(0);
}

/** How long stopping waits for work in flight: with the look before it, Ctrl-C ends within 4 s whatever the service does. */
const STOP_MS = 1500;

/** How long the look at the service before the stop line is waited for. */
const STOP_LOOK_MS = 2000;

/**
 * Who the personal API key makes the user in the tracker, said once at start; a key that is nobody's (one in
 * FLOWSYNC_API_KEY that no one registered) is registered to the user of git's email first, when the agent is an
 * operator (always, with the embedded service).
 */
async function sayWhoYouAre(agent: Agent, out: (line: string) => void, roots: string[]): Promise<void> {
  const { secret, source } = await agent.secrets.locate(agent.secretsUrl, 'api-key');
  if (secret === null) return;
  const from = source === 'environment' ? SECRET_ENV_VARS['api-key'] : 'in the OS keychain';
  const line = await keyLineAtStart(agent.client, secret, agent.serviceUrl, from, roots);
  if (line) out(`flowsync: ${line}`);
}

/** Whether `work` ends within `ms` (a failure of it is thrown, as before). */
async function endsWithin(work: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  try {
    return await Promise.race([work.then(() => true), late]);
  } finally {
    clearTimeout(timer);
  }
}
