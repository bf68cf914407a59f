import { needsOf, needsOfAll, type Waiting, type WaitingFacts } from './needs-you.ts';
import { plural } from './plural.ts';
import { TROUBLE_PHASES, type SyncPhase } from './sync-phase.ts';

/**
 * Whether a repository is "in sync", decided once for every place that says it or its opposite: `start`'s lines
 * (each repository's, and the one at stop), the running agent's lines for a second `start`, `resume`, `status`
 * (its `inSync`), the window's badge and the tray. It sat in 5 places, each with its own list: one forgot paused
 * repositories, the stop line forgot conflicts, and `status` with no agent running said nothing at all, so its
 * "0 pending" read as in sync over edits nobody had counted.
 */

/** What inSyncOf reads of a repository: the engine's status, the window's RepositoryView and `status`'s rows have it. */
export interface SyncFacts extends WaitingFacts {
  /**
   * The engine's phase; null when no agent watches the repository now (none runs, or it syncs another service):
   * nothing has counted what changed on disk since the last look, so the counts are the state's, not the disk's.
   */
  phase: SyncPhase | null;
  /** Its user paused it (whatever the phase says meanwhile). */
  paused: boolean;
  counts: {
    /** Files whose change is not on the service yet (a flow sent and not answered counts as one). */
    pending: number;
    conflicts: number;
    /** Files newer on the service, untouched here (a teammate's edit not taken yet). */
    behind: number;
  };
  /** The line that says none of its flow folders is there; null or absent when they are. */
  nothingToSync?: string | null;
  /** Why it is not synced here (phase `elsewhere`: another checkout is its source), as the agent says it. */
  message?: string | null;
  /**
   * The look at the service asked before "in sync" got no answer now: `since` is when the last look went
   * through, as the line says it (`14:02`), null when none did. Absent or null: the service was seen now, or no look
   * was asked (a phase that says what is not known already: not watched, paused, offline).
   */
  notReached?: { since: string | null } | null;
  /** owner/name: the words over several repositories name the one they speak of (`acme/app offline`). */
  owner?: string;
  name?: string;
}

/**
 * The one verdict, most pressing first:
 * - `not synced`: another checkout is its source (phase `elsewhere`); nothing here is sent.
 * - a trouble phase (`offline`, `unavailable`, `unauthorized`, `missing`, `storage`): nothing reaches the service.
 * - `waiting for you`: needsOf is not empty (conflicts, held deletions, files not in this checkout, the config).
 * - `paused`: its user paused it; changes are counted and wait for the resume.
 * - `not watched`: no agent looks at the disk (none runs): what changed since is not known.
 * - `sending`: a round is on its way (phase `syncing`).
 * - `pending`: changes not on the service yet, and no round on its way now (about to start, or refused).
 * - `looking`: a scan of the disk, nothing pending found yet.
 * - `behind`: everything of this checkout is sent, and files are newer on the service (a teammate's edits).
 * - `not reached`: nothing differs as of the last look at the service, and the look asked now got no answer: in sync
 *   only as of then (a teammate may have written since).
 * - `nothing to sync`: none of its flow folders is there.
 * - `in sync`: the disk is what the service has, as an agent watching it knows and a fresh look at the service saw.
 */
export type SyncState =
  | 'in sync'
  | 'behind'
  | 'not reached'
  | 'looking'
  | 'pending'
  | 'sending'
  | 'not watched'
  | 'paused'
  | 'waiting for you'
  | 'nothing to sync'
  | 'not synced'
  | Trouble;

export interface SyncVerdict {
  /** True only for `in sync`: nothing to send, nothing newer there, nothing waiting, and an agent looked. */
  inSync: boolean;
  state: SyncState;
  /**
   * The state in words, one line: `in sync`; `3 files pending`; `your changes are sent; 2 files newer on the
   * service`; `2 in conflict, 40 deletions held`; `paused, 1 file pending`; `offline, 3 files pending`; over several
   * repositories it names which (`acme/app offline`, `2 repositories paused`).
   */
  line: string;
}

/** Said when no agent watches the repository: the counts are the state's, and the disk may differ. */
export const NOT_WATCHED_LINE =
  'no agent watches it: changes on disk since its last sync are not counted (`flowsync sync` looks)';

/** The verdict for one repository. */
export function inSyncOf(facts: SyncFacts): SyncVerdict {
  const { pending, behind } = facts.counts;
  const state = stateOf(facts);
  const pendingWords = pending > 0 ? `, ${plural(pending, 'file')} pending` : '';
  const newerWords = behind > 0 ? `, ${plural(behind, 'file')} newer on the service` : '';
  const line = {
    'not synced': () => facts.message ?? 'not synced here: another checkout is its source',
    'waiting for you': () => said(needsOf(facts)) + pendingWords + newerWords,
    paused: () => `paused${pendingWords}`,
    'not watched': () => NOT_WATCHED_LINE,
    sending: () => (pending > 0 ? plural(pending, 'file') + ' pending' + newerWords : 'sending'),
    pending: () => plural(pending, 'file') + ' pending' + newerWords,
    looking: () => 'looking at the disk',
    behind: () => `your changes are sent; ${plural(behind, 'file')} newer on the service`,
    'not reached': () => notReachedLine(facts.notReached?.since ?? null),
    'nothing to sync': () => facts.nothingToSync ?? 'nothing to sync',
    'in sync': () => 'in sync',
  } satisfies Record<Exclude<SyncState, Trouble>, () => string>;
  const words = isTroubleState(state) ? `${stateWord(state)}${pendingWords}` : line[state]();
  return { inSync: state === 'in sync', state, line: words };
}

/**
 * The verdict over several repositories (the tray's one line, `start`'s line at stop): the most pressing state of
 * any, its counts summed, and the repository named where one state is one repository's (`acme/app offline`).
 * Repositories synced from another checkout are not this agent's to sync and are left out.
 */
export function inSyncOfAll(repos: readonly SyncFacts[]): SyncVerdict {
  const synced = repos.filter((repo) => repo.phase !== 'elsewhere');
  const verdicts = synced.map((repo) => ({ repo, verdict: inSyncOf(repo) }));
  const state = PRECEDENCE.find((s) => verdicts.some(({ verdict }) => same(verdict.state, s))) ?? 'in sync';
  const those = verdicts.filter(({ verdict }) => same(verdict.state, state)).map(({ repo }) => repo);
  const sum = (count: (repo: SyncFacts) => number) => synced.reduce((total, repo) => total + count(repo), 0);
  const pending = sum((repo) => repo.counts.pending);
  const behind = sum((repo) => repo.counts.behind);
  const first = those[0];
  const named = (repo: SyncFacts | undefined) =>
    repo?.owner ? `${repo.owner}/${repo.name ?? ''}` : 'a repository';
  const which = those.length === 1 ? named(first) : plural(those.length, 'repository', 'repositories');
  const pendingWords = pending > 0 ? `, ${plural(pending, 'file')} pending` : '';
  const line =
    state === 'trouble'
      ? `${named(first)} ${stateWord(inSyncOf(first!).state)}`
      : {
          'waiting for you': () => said(needsOfAll(synced)),
          paused: () => `${which} paused${pendingWords}`,
          'not watched': () => `${which}: ${NOT_WATCHED_LINE}`,
          sending: () => (pending > 0 ? plural(pending, 'file') + ' pending' : 'sending'),
          pending: () => plural(pending, 'file') + ' pending',
          looking: () => 'looking at the disk',
          behind: () => `your changes are sent; ${plural(behind, 'file')} newer on the service`,
          'not reached': () => inSyncOf(first!).line,
          'nothing to sync': () => `${named(first)} has nothing to sync`,
          'in sync': () => 'in sync',
        }[state]();
  const verdict: SyncState = state === 'trouble' ? inSyncOf(first!).state : state;
  return { inSync: verdict === 'in sync', state: verdict, line };
}

/** The phases of TROUBLE_PHASES, each a state of its own: nothing reaches the service, for a reason said. */
type Trouble = Extract<SyncPhase, 'offline' | 'unavailable' | 'unauthorized' | 'missing' | 'storage'>;

/**
 * The one word for each state, said the same in every place that names it: the window's badge, the tray's line,
 * `start`'s lines and `status`'s `now:` line (docs/words.md is its table). The state's own name stays in `status
 * --json`'s `syncState` for scripts; where the two differ, the name is the code's and the word the user's: a token
 * the service refused (a member removed, a token revoked or expired) is "signed out", which is what to fix; a state
 * file that cannot be written is the data folder's fault, where "storage" named no folder.
 */
export const STATE_WORDS = {
  'in sync': 'in sync',
  behind: 'newer on the service',
  'not reached': 'not reached',
  looking: 'looking at the disk',
  pending: 'pending',
  sending: 'sending',
  'not watched': 'not watched',
  paused: 'paused',
  'waiting for you': 'waiting for you',
  'nothing to sync': 'nothing to sync',
  'not synced': 'not synced',
  offline: 'offline',
  unavailable: 'unavailable',
  unauthorized: 'signed out',
  missing: 'missing',
  storage: 'data folder not writable',
} as const satisfies Record<SyncState, string>;

/** A state in its user's words (STATE_WORDS). */
export function stateWord(state: SyncState): string {
  return STATE_WORDS[state];
}

/**
 * A phase in its user's words, where a line names the phase itself (`offline, 3 files pending`): the word of the
 * state the phase alone makes. `idle` (between rounds) makes no state by itself: inSyncOf says which it is.
 */
export function phaseWords(phase: Exclude<SyncPhase, 'idle'>): string {
  return stateWord(PHASE_STATES[phase]);
}

const PHASE_STATES = {
  scanning: 'looking',
  syncing: 'sending',
  offline: 'offline',
  unavailable: 'unavailable',
  unauthorized: 'unauthorized',
  missing: 'missing',
  storage: 'storage',
  stopped: 'not watched',
  paused: 'paused',
  elsewhere: 'not synced',
} as const satisfies Record<Exclude<SyncPhase, 'idle'>, SyncState>;

/** Over several repositories: the order in which one repository's state speaks for all (trouble: any of them). */
const PRECEDENCE = [
  'trouble',
  'waiting for you',
  'paused',
  'not watched',
  'sending',
  'pending',
  'looking',
  'behind',
  'not reached',
  'nothing to sync',
  'in sync',
] as const;

/** What waits for its user, in needsOf's words: `2 in conflict, 40 deletions held`. */
function said(needs: readonly Waiting[]): string {
  return needs.map((need) => need.words).join(', ');
}

function same(state: SyncState, of: (typeof PRECEDENCE)[number]): boolean {
  return of === 'trouble' ? isTroubleState(state) : state === of;
}

function isTroubleState(state: SyncState | SyncPhase): state is Trouble {
  return (TROUBLE_PHASES as readonly string[]).includes(state);
}

function stateOf(facts: SyncFacts): SyncState {
  const { phase, paused } = facts;
  const { pending, behind } = facts.counts;
  if (phase === 'elsewhere') return 'not synced';
  if (phase !== null && isTroubleState(phase)) return phase;
  if (needsOf(facts).length > 0) return 'waiting for you';
  if (paused || phase === 'paused') return 'paused';
  // A stopped engine watches nothing either: the disk may have changed since.
  if (phase === null || phase === 'stopped') return 'not watched';
  if (phase === 'syncing') return 'sending';
  if (pending > 0) return 'pending';
  if (phase === 'scanning') return 'looking';
  if (behind > 0) return 'behind';
  if (facts.nothingToSync) return 'nothing to sync';
  if (facts.notReached) return 'not reached';
  return 'in sync';
}

/** "in sync as of 14:02; the service could not be reached now": never plain "in sync" without a fresh look. */
function notReachedLine(since: string | null): string {
  return since === null
    ? 'nothing to send; the service could not be reached to look at it'
    : `in sync as of ${since}; the service could not be reached now`;
}
