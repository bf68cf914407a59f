import { Command, Option } from 'commander';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import {
  Agent,
  configuredRepository,
  currentBranch,
  keyLineAtStart,
  loadConfig,
  REPO_CONFIG_FILE,
  repoConfigProblem,
  saveConfig,
  TokenRenewal,
  withRepository,
  type BranchSwitch,
  type WatchedRepository,
} from '../../agent/index.ts';
import {
  activityOf,
  announceReady,
  createAgentApi,
  startBridge,
  statusEvents,
  type ActivityEntry,
  type FileChange,
} from '../../window/index.ts';
import {
  defaultDataFolder,
  keepMemoryLow,
  logUnexpected,
  privateSocketPlace,
  rendererDir,
} from '../../host/index.ts';
import { SECRET_ENV_VARS } from '../../secrets/index.ts';
import {
  folderGone,
  inSyncOf,
  inSyncOfAll,
  NOT_SENT_REASONS,
  namedFlows,
  plural,
  printable,
  serviceAway,
  warnedPath,
  type SyncFacts,
} from '../../protocol/index.ts';
import {
  behindLine,
  newerClearedLine,
  type FileConflict,
  type FreshLook,
  type SyncMiss,
  type SyncProgress,
  type SyncReport,
  type SyncStatus,
} from '../../sync/index.ts';
import { parsePort } from '../options.ts';
import { SignalPhases } from '../signal-phases.ts';
import { ProgressDisplay } from '../progress.ts';
import { NO_PRIVATE_SOCKET } from '../agent-bridge.ts';
import { becomeAgentOrHandOver } from '../running-agent.ts';
import { urlOption } from '../service-url.ts';
import { UsageError } from '../usage-error.ts';
import { waitForDataFolder } from '../wait-for-data-folder.ts';
import { showWindow } from '../window-address.ts';
import { where } from '../where.ts';
import { clockTime, localTime } from '../local-time.ts';

export function startCommand(): Command {
  return new Command('start')
    .description(
      'Adds the folders to the repositories flowsync keeps in sync (saved in the config file), syncs every\n' +
        'flow folder (each folder under flows/) with the service, then watches and sends each change as it\n' +
        'happens, printing one line per sync. Without a service URL (--url, $FLOWSYNC_URL or the config file)\n' +
        'the service runs inside the agent. Ctrl-C stops cleanly; nothing pending is lost.',
    )
    .argument('[folders...]', 'repository folders to add (default: those already added)')
    .addOption(urlOption())
    .addHelpText(
      'after',
      '\nExamples:\n  $ npm start -- ~/code/app\n  $ flowsync start ~/code/app ~/code/api\n  $ flowsync start\n' +
        '  $ flowsync start ~/code/app --rename    # after `git remote set-url origin git@github.com:acme/app2.git`',
    )
    .addOption(
      new Option('--ui-port <port>', "port of the window's loopback address")
        .argParser(parsePort)
        .default(0, 'any free port, another each run'),
    )
    .option(
      '--source',
      "sync these folders' repositories from these checkouts, instead of the checkouts they are synced from now (a worktree, another clone)",
    )
    .option(
      '--rename',
      'sync these folders under the names their origin gives them now (after `git remote set-url`): the new name gets every file, and the old name keeps its files on the service',
    )
    .action((folders: string[], options: RunOptions) => {
      if (options.source && folders.length === 0)
        throw new UsageError('--source needs the folder to sync from: `flowsync start <folder> --source`.');
      if (options.rename && folders.length === 0)
        throw new UsageError(
          '--rename needs the folder whose name changed: `flowsync start <folder> --rename`.',
        );
      return runAgent(folders, options, true);
    });
}

export function uiCommand(): Command {
  return new Command('ui')
    .description(
      'Runs the agent (the repositories already added) and serves its window at a loopback address of its own\n' +
        '(http://<random>.localhost:<port>/, new each run: Chromium and Firefox open it; Safari does not). On a\n' +
        'terminal it prints an address that opens the window once; --open opens it in your browser (a new\n' +
        'window each time, also when an agent already runs). Like `flowsync start`, it syncs and watches until\n' +
        'Ctrl-C; repositories can be added from the window.',
    )
    .addOption(urlOption())
    .addOption(
      new Option('--ui-port <port>', 'port of the loopback address')
        .argParser(parsePort)
        .default(0, 'any free port, another each run'),
    )
    .option('--open', 'open the window in the browser ($BROWSER, else the system opener)')
    .addHelpText('after', '\nExamples:\n  $ flowsync ui --open\n  $ flowsync ui --ui-port 8384')
    .action((options: RunOptions) => runAgent([], options, false));
}

interface RunOptions {
  url?: string;
  uiPort: number;
  open?: boolean;
  source?: boolean;
  rename?: boolean;
}

async function runAgent(folders: string[], options: RunOptions, needsRepository: boolean): Promise<void> {
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

  const agent = await Agent.open({ config, serviceUrl: options.url, persistConfig: true });
  if (agent.embedded) lock.setService(agent.serviceUrl, agent.embedded.socketPath);
  out(`flowsync: syncing with ${agent.serviceUrl}${agent.embedded ? ' (the embedded service)' : ''}`);
  if (agent.notice) out(agent.notice.line);
  // One line at a time: out() spells a newline inside a line out as \n.
  if (agent.notice?.forTerminal && process.stdout.isTTY) agent.notice.forTerminal.split('\n').forEach(out);
  // Not waited for: a service that does not answer (a dead VPN) held the start 30 s before anything was synced.
  void sayWhoYouAre(
    agent,
    out,
    config.repositories.map((repository) => repository.path),
  ).catch(logUnexpected('saying who you are to the tracker'));
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
  // Recent activity from the start, so that the first sync is in the window's list too.
  const activity = activityOf(agent);
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

  // The window before the first sync: a service slow to answer, or one whose listing never ends, must not keep it
  // from appearing (its screens say what the sync does meanwhile).
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
  const showProgress = ({ identity }: WatchedRepository, { stage, done, total }: SyncProgress) =>
    progress.update(
      `${where(identity, currentBranch(identity.root))}: ${stage === 'hashing' ? 'hashing files' : 'uploading flows'}`,
      done,
      total,
    );
  // A bar for the first, long sync only; after it, each sync is one line.
  agent.on('progress', showProgress);
  await agent.syncAll({ watchFirst: true });
  agent.off('progress', showProgress);
  progress.stop();
  // What each repository-config line said last: a change is said once, and the one at start in its summary.
  const configLines = new Map<string, string | null>();
  const summed = (watched: WatchedRepository, about?: string) => {
    const problem = repoConfigProblem(watched.identity.root);
    configLines.set(watched.identity.root, problem);
    return summary(watched, watched.engine.status(), about, problem);
  };
  for (const watched of agent.watched()) out(summed(watched));
  // A folder that was not there at start is there now (the drive is mounted), and its first round is done.
  agent.on('found', (watched) => out(`${time()} ${summed(watched, `${watched.identity.root} is there`)}`));
  // A hand edit of .flowsync/repo-config.json the schema refuses is not sent: said here, not only in the window.
  agent.on('repo-config', (watched, problem) => {
    if (configLines.get(watched.identity.root) === problem) return;
    configLines.set(watched.identity.root, problem);
    out(`${time()} ${named(watched)}: ${problem ?? `${REPO_CONFIG_FILE} is valid again`}`);
  });
  await agent.watchAll();
  // Said once, at start: what this service cannot protect (nothing, for flowsync's own).
  const limits = await agent.serviceInfo.limits();
  if (limits) out(limits);

  const phases = new Map<WatchedRepository, SyncStatus['phase']>();
  const storageLines = new Map<WatchedRepository, string | null>();
  /** The signed-out line said last, per repository: a round a minute meets the same refusal, said once. */
  const signedOutLines = new Map<WatchedRepository, string | null>();
  // Both from the agent's Recent activity, as the window shows them: the files a round sent, and files newly skipped.
  // The rounds after a branch switch are one line of their own, when they are done.
  activity.on('round', ({ repository, report, files }) => {
    const { root } = repository.identity;
    if (!agent.switchingBranch(root)) out(syncLine(repository, report, files, currentBranch(root)));
  });
  agent.on('branch', (watched, switched) => out(branchLine(watched, switched)));
  agent.on('renamed', (_, message) => out(`${time()} ${message}`));
  agent.on('gitChanges', (watched, line) => out(`${time()} ${named(watched)}: ${line}`));
  agent.on('repoConfig', (watched, line) => out(`${time()} ${named(watched)}: ${line}`));
  activity.on('entry', (entry) => {
    if (entry.kind === 'skipped') out(skippedLine(entry));
    if (entry.kind === 'paused')
      out(
        `${time()} ${entry.repository}: paused; changes are counted and sent when resumed (flowsync resume ${entry.root})`,
      );
    if (entry.kind === 'resumed')
      out(`${time()} ${entry.repository}: resumed${entry.message ? `: ${entry.message}` : ''}`);
    // Deletions held, and what its user settled (where a replaced edit was kept): always a line (issue 41).
    if (entry.kind === 'held') out(`${time()} ${entry.repository}: ${entry.message}`);
    // A teammate's version waited and the file was changed here: a conflict, said at once (issue 46).
    if (entry.kind === 'conflict-here')
      out(
        `${time()} ${entry.repository}: ${entry.flowPath}/${entry.path}: changed here and on the service: a conflict; \`flowsync conflicts\``,
      );
    if (entry.kind === 'taken')
      out(
        `${time()} ${entry.repository}: ${entry.flowPath === null ? '' : `${entry.flowPath}/${entry.path}: `}${entry.message}`,
      );
    if (entry.kind === 'settled')
      out(
        `${time()} ${entry.repository}: ${entry.flowPath === null ? '' : `${entry.flowPath}/${entry.path}: `}${entry.message}`,
      );
  });
  // Each engine says when it is back in sync after an outage; repositories added later are followed too.
  const recovering = new WeakSet<WatchedRepository>();
  const followRecovery = (watched: WatchedRepository) => {
    if (recovering.has(watched)) return;
    recovering.add(watched);
    watched.engine.on('recovered', ({ files }) => out(`${time()} ${named(watched)}: ${recoveryLine(files)}`));
    // A rescan that found what the watcher missed is said, never silent (issue 21).
    watched.engine.on('missed', (miss) => out(`${time()} ${rescanLine(named(watched), miss)}`));
  };
  for (const watched of agent.watched()) followRecovery(watched);
  // Files newer on the service (a teammate's edits, untouched here): a line when their count changes to some, and
  // one when it is back to none, with why (issue 47: taken, pulled, reverted there). A service gone back in time:
  // its line once, when it is first seen (and again if it comes back after settling).
  const newerCounts = new Map<WatchedRepository, number>();
  /** The files newer there since the count was last 0, read when it changes: what the line at 0 says why of. */
  const newerSeen = new Map<WatchedRepository, Map<string, FileConflict>>();
  const wentBack = new Map<WatchedRepository, string | null>();
  agent.on('status', (watched, status) => {
    followRecovery(watched);
    const newer = status.counts.behind;
    const before = newerCounts.get(watched) ?? 0;
    if (newer !== before) {
      newerCounts.set(watched, newer);
      const seen = newerSeen.get(watched) ?? new Map<string, FileConflict>();
      newerSeen.set(watched, seen);
      if (newer > 0) {
        for (const file of watched.engine.service.newer()) seen.set(`${file.flowPath}\0${file.path}`, file);
        const line = watched.engine.service.newerLine();
        if (line !== null) out(`${time()} ${named(watched)}: ${line}`);
      } else if (before > 0) {
        const why = watched.engine.service.noLongerNewer([...seen.values()]);
        seen.clear();
        out(`${time()} ${named(watched)}: ${newerClearedLine(why)}`);
      }
    }
    if (status.phase === 'idle') {
      const line = watched.engine.service.wentBackLine();
      if (line !== (wentBack.get(watched) ?? null)) {
        wentBack.set(watched, line);
        if (line !== null) out(`${time()} ${named(watched)}: ${line}`);
      }
    }
    const previous = phases.get(watched);
    phases.set(watched, status.phase);
    const name = named(watched);
    if (status.phase !== 'storage' && status.phase !== 'scanning') storageLines.delete(watched);
    if (status.phase === 'idle') signedOutLines.delete(watched);
    if (status.phase === previous) return;
    if (status.phase === 'unauthorized') {
      // Said once while it lasts (issue 48): a round a minute meets the same refusal, and is not said again.
      if (status.message === signedOutLines.get(watched)) return;
      signedOutLines.set(watched, status.message);
      out(
        `${time()} ${name}: signed out, ${plural(status.counts.pending, 'file')} pending: ${status.message ?? ''}`,
      );
    } else if (serviceAway(status.phase)) {
      const wait = status.retryAt
        ? ` retrying in ${Math.max(1, Math.round((status.retryAt - Date.now()) / 1000))} s`
        : '';
      out(
        `${time()} ${name}: ${status.phase}, ${plural(status.counts.pending, 'file')} pending;${wait}: ${status.message ?? ''}`,
      );
    } else if (status.phase === 'missing') {
      out(`${time()} ${name}: ${status.message ?? folderGone(watched.identity.root)}`);
    } else if (status.phase === 'storage' && status.message !== storageLines.get(watched)) {
      // Each retry scans (phase 'scanning') and fails again: a line only when the count or the fault changed.
      storageLines.set(watched, status.message);
      out(`${time()} ${name}: ${status.message ?? 'the data folder cannot be written'}`);
    }
  });
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
  // "Everything was in sync" only after a look at the service (issue 47: a teammate's edit a second before Ctrl-C
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
  // again as full listings at the next start. Waiting for it held Ctrl-C up to the 15 s guard (a frozen service).
  const closed = await endsWithin(agent.close(), STOP_MS);
  lock.release();
  out(atStop);
  // Not closed: the unanswered request and what waits on it would keep the process alive. (A flow sent and not
  // answered counts as pending, so the line above never says "in sync" then.)
  if (!closed) process.exit(0);
}

/**
 * What `start` says at stop, of every repository (inSyncOfAll), with when what waits goes: "everything was in sync"
 * only when it was (it was said over conflicts and held deletions, which needsOf knew and this line did not), and
 * the service was looked at just before (`notReached` otherwise: "in sync as of 14:02"). `newer`: the files newer on
 * the service, said with who wrote them (behindLine).
 */
export function stopLine(
  repos: readonly (SyncFacts & { newer?: readonly { writtenBy: string | null }[] })[],
): string {
  const { inSync, state, line } = inSyncOfAll(repos);
  if (inSync) return 'Stopped; everything was in sync.';
  if (state === 'pending' || state === 'sending') return `Stopped; ${line}, sent at the next start.`;
  const pending = repos.some((repo) => repo.counts.pending > 0);
  if (state === 'paused') return `Stopped; ${line}${pending ? ', sent when resumed' : ''}.`;
  if (state === 'behind') {
    const newer = behindLine(repos.flatMap((repo) => (repo.phase === 'elsewhere' ? [] : (repo.newer ?? []))));
    return newer === null
      ? `Stopped; ${line} (\`flowsync resolve --newer\` takes them).`
      : `Stopped; your changes are sent; ${newer}.`;
  }
  return `Stopped; ${line}.`;
}

/** A look at the service that did not go through, as inSyncOf reads it: since when the last one did (`14:02`). */
function notReachedOf(look: FreshLook | undefined): SyncFacts['notReached'] {
  if (look?.failure == null) return null;
  return { since: look.at === null ? null : clockTime(look.at) };
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

/** `acme/app: flows/hello/logo.png not sent: binary (not UTF-8 text): add it to .gitignore` */
function skippedLine(entry: ActivityEntry): string {
  const what =
    entry.flowPath === null || entry.path === null
      ? entry.message
      : `${warnedPath({ flowPath: entry.flowPath, path: entry.path })} not sent: ${entry.message}`;
  return `${time()} ${where(entry.repository, currentBranch(entry.root))}: ${what}`;
}

/** A repository as a line names it: owner/name and the branch it is on now. */
function named({ identity }: WatchedRepository): string {
  return where(identity, currentBranch(identity.root));
}

/** `acme/app: branch main → feat-x: 37 changed, 212 deletions held` (the rounds that followed the switch). */
export function branchLine({ identity }: WatchedRepository, switched: BranchSwitch): string {
  const { from, to, changed, heldDeletions, conflicts, refused } = switched;
  const parts = [
    `${changed} changed`,
    heldDeletions > 0 ? `${plural(heldDeletions, 'deletion')} held (flowsync sync --yes)` : '',
    conflicts > 0 ? `${conflicts} in conflict (flowsync conflicts)` : '',
    refused > 0 ? `${plural(refused, 'flow')} refused (see flowsync status)` : '',
  ].filter(Boolean);
  return (
    `${time()} ${identity.owner}/${identity.name}: branch ${from ?? '(none)'} → ${to ?? '(none)'}: ` +
    parts.join(', ')
  );
}

/**
 * `acme/app (main): rescan (new folder): 3 changed files picked up and sent`. Said neutrally: the watcher is a
 * hint and the rescan the truth, and a rescan of a folder just made (at start, a checkout) finds its files before
 * the watcher's reports arrive; "the watcher missed" read as a bug report on that normal path (issue 42).
 */
export function rescanLine(name: string, { files, reason }: SyncMiss): string {
  return `${name}: rescan (${reason}): ${plural(files, 'changed file')} picked up and sent`;
}

function recoveryLine(files: number): string {
  return `Back in sync: ${plural(files, 'file')} sent`;
}

function time(): string {
  return new Date().toTimeString().slice(0, 8);
}

/** `acme/app (~/code/app): 2 flows, 12 files, in sync`; `about` comes before the counts (`… is there`). */
function summary(
  { identity, engine }: WatchedRepository,
  status: SyncStatus,
  about?: string,
  configProblem: string | null = null,
): string {
  const nothing = engine.nothingToSync();
  // The line names the folder itself.
  if (nothing !== null)
    return `${where(identity, currentBranch(identity.root))}: ${about ? `${about}: ` : ''}${nothing}`;
  const { flows, files, pending, warnings, rejected, conflicts, behind } = status.counts;
  // Decided once (inSyncOf); what is not in sync is said below, each with the command that settles it. Behind:
  // what this checkout has is sent, and the files newer there are said below too.
  const verdict = inSyncOf({ ...status, configProblem });
  const extra = [
    verdict.inSync ? 'in sync' : verdict.state === 'behind' ? 'your changes are sent' : '',
    behind > 0 ? `${plural(behind, 'file')} newer on the service (flowsync resolve --newer)` : '',
    pending > 0 && status.paused ? `${pending} pending` : '',
    pending > 0 && !status.paused
      ? `${pending} pending (${status.phase}${status.message ? `: ${status.message}` : ''})`
      : '',
    status.paused
      ? `paused${status.pausedSince ? ` since ${localTime(status.pausedSince)}` : ''}, nothing sent until \`flowsync resume\``
      : '',
    conflicts > 0 ? `${conflicts} in conflict (flowsync conflicts)` : '',
    status.heldDeletions > 0 ? `${plural(status.heldDeletions, 'deletion')} held (flowsync sync --yes)` : '',
    status.notInCheckout > 0
      ? `${plural(status.notInCheckout, 'file')} on the service not in this checkout (flowsync resolve --not-in-checkout)`
      : '',
    configProblem ? configProblem : '',
    warnings > 0 ? `${warnings} not sent (${NOT_SENT_REASONS}; see flowsync status)` : '',
    rejected > 0 ? `${plural(rejected, 'flow')} refused by the service (see flowsync status)` : '',
  ].filter(Boolean);
  return `${where(identity, currentBranch(identity.root), identity.root)}: ${about ? `${about}: ` : ''}${plural(flows, 'flow')}, ${plural(files, 'file')}, ${extra.join(', ')}`;
}

/** A round that touched at most this many files names them; a larger one is counted. */
const NAMED_FILES = 3;

/**
 * One line per round; `files` (from the agent's activity, null when not read) names them for a small round. The
 * repository is named with its branch, and with the service when the command said it nowhere else (`sync`).
 */
export function syncLine(
  { identity }: WatchedRepository,
  report: SyncReport,
  files: readonly FileChange[] | null,
  branch: string | null,
  service?: string,
): string {
  const name = `${where(identity, branch)}${service ? ` with ${service}` : ''}`;
  if (report.requests === 0 && report.rejected.length === 0) return `${time()} ${name}: up to date`;
  const rejected =
    report.rejected.map((r) => `; refused ${r.flowPath}: ${r.message}`).join('') +
    report.conflicts
      .map(
        (c) =>
          `; conflict ${c.flowPath}/${c.path}: changed on the service${c.writtenBy ? ` by ${c.writtenBy}` : ''}`,
      )
      .join('');
  if (files && files.length > 0 && files.length <= NAMED_FILES) {
    const named = files.map((file) => `${file.flowPath}/${file.path} ${file.kind}`).join(', ');
    return `${time()} ${name}: ${named} in ${report.ms} ms${rejected}`;
  }
  return (
    `${time()} ${name}: ${report.files.length > 0 ? namedFlows(report.files.map((file) => file.flowPath)) : plural(report.flows, 'flow')}, ` +
    `+${report.created} ~${report.updated} -${report.deleted} files in ${report.ms} ms${rejected}`
  );
}
