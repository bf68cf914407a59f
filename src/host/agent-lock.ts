import { linkSync, lstatSync, mkdirSync, readFileSync, rmSync, unlinkSync } from 'node:fs';
import { dirname } from 'node:path';
import { z } from 'zod';
import { createExclusive, replaceFile, temporaryNameFor } from './exclusive-files.ts';
import { defaultLockPath } from './paths.ts';

// node:crypto loaded at its first use, not with this module: `flowsync status` loads the module and never uses it,
// and loading node:crypto costs a process 22 million instructions (about 15 ms).
const randomBytes = (size: number) => process.getBuiltinModule('node:crypto').randomBytes(size);

/**
 * One agent per machine user: two agents on one state file and one embedded service database would both send
 * every change and fight over the service's port. The lock is a small JSON file next to the state naming the
 * agent that runs (its pid and window address), so that a second `flowsync start` can hand its folders over.
 */
const ownerSchema = z.object({
  pid: z.int().positive(),
  /** What holds it: an agent (`start`, `ui`, both serve a window) or a one-shot `sync`, which serves none. */
  command: z.enum(['start', 'ui', 'sync']),
  /** When the process started as the OS counts it (Linux: /proc/<pid>/stat), to tell a reused pid apart. */
  processStart: z.string().nullable(),
  startedAt: z.string(),
  /** The agent's window address (with its token); null while the agent is still starting. */
  bridge: z.string().nullable(),
  /**
   * The Unix socket the agent's own processes reach its bridge through (in the 0700 data folder, or a 0700 folder
   * of its own when that path is too long for a socket); null where there is none (Windows), and in a lock of an
   * older flowsync: then the window's port.
   */
  socket: z.string().nullable().default(null),
  /**
   * The embedded service's address, on whichever port it got; null until it runs, or when the agent syncs with
   * another service. The CLI reaches the embedded service only here, never at a fixed port another local user
   * could listen on first. (Absent in a lock of an older flowsync.)
   */
  service: z.string().nullable().default(null),
  /** The embedded service's Unix socket, when it has one (see `socket`); null otherwise, and in an older lock. */
  serviceSocket: z.string().nullable().default(null),
  /** Tells this lock apart from an earlier one of the same process. */
  nonce: z.string(),
});
export type AgentLockOwner = z.infer<typeof ownerSchema>;

export class AgentLock {
  private owner: AgentLockOwner;
  private released = false;
  private readonly releaseOnExit = () => this.release();

  private constructor(
    readonly path: string,
    owner: AgentLockOwner,
  ) {
    this.owner = owner;
    // process.exit and a normal end both pass here; SIGKILL does not, and the next start sees a dead pid.
    process.once('exit', this.releaseOnExit);
  }

  /**
   * Takes the lock, or returns the agent that holds it. Creation is one `link` of a complete file, which fails
   * when the lock exists: of two starts at the same moment exactly one wins, and nobody reads half a lock.
   */
  static acquire(command: AgentLockOwner['command'], path = defaultLockPath()): AgentLock | AgentLockOwner {
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    const owner: AgentLockOwner = {
      pid: process.pid,
      command,
      processStart: processStartOf(process.pid),
      startedAt: new Date().toISOString(),
      bridge: null,
      socket: null,
      service: null,
      serviceSocket: null,
      nonce: randomBytes(8).toString('hex'),
    };
    // Each turn either wins, finds a live owner, or removes a stale lock (or waits 5 ms for another start that
    // does). A takeover folder left by a start killed inside its takeover holds every turn until it is stale, so
    // the turns go on past that; longer means others keep taking and dropping the lock, which only a bug does.
    // The complete file is written once: that wait is some 2,000 turns.
    const temp = writeTemp(path, owner);
    try {
      const deadline = Date.now() + TAKEOVER_STALE_MS + 5_000;
      while (Date.now() < deadline) {
        try {
          linkSync(temp, path);
          return new AgentLock(path, owner);
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
        }
        const text = readText(path);
        if (text === null) continue; // released meanwhile
        const held = parseOwner(text);
        if (held && isAlive(held)) return held;
        removeStale(path, (now) => now === text);
      }
      throw new Error(`Could not take ${path}: it keeps changing.`);
    } finally {
      unlinkSync(temp);
    }
  }

  /**
   * Records the window address and the bridge's private socket once the bridge listens, so a second start can hand
   * its folders over.
   */
  setBridge(address: string, socket: string | null): void {
    this.update({ bridge: address, socket });
  }

  /**
   * Records the embedded service's address and its socket once it listens, so `flowsync call` finds it (and its
   * tokens).
   */
  setService(url: string, socket: string | null): void {
    this.update({ service: url, serviceSocket: socket });
  }

  private update(change: Partial<AgentLockOwner>): void {
    this.owner = { ...this.owner, ...change };
    replaceFile(this.path, lockText(this.owner), 0o600);
  }

  /** Removes the lock if it is still this agent's. */
  release(): void {
    if (this.released) return;
    this.released = true;
    process.off('exit', this.releaseOnExit);
    const text = readText(this.path);
    if (text !== null && parseOwner(text)?.nonce === this.owner.nonce) unlinkSync(this.path);
  }
}

/**
 * Takes the lock, or returns the live agent that holds it. Where the OS gives no process start time (macOS,
 * Windows), a reused pid looks alive: a recorded window that no longer answers decides it, and the lock is
 * taken over.
 */
export async function claimAgentLock(
  command: AgentLockOwner['command'],
  answers: BridgeAnswers,
  path = defaultLockPath(),
): Promise<AgentLock | AgentLockOwner> {
  for (;;) {
    const claim = AgentLock.acquire(command, path);
    if (claim instanceof AgentLock || (await confirmed(claim, answers))) return claim;
    removeStale(path, (text) => parseOwner(text)?.nonce === claim.nonce);
  }
}

/** The agent that holds the lock, if it is alive; null when none runs (no lock, or a stale one). */
export async function findRunningAgent(
  answers: BridgeAnswers,
  path = defaultLockPath(),
): Promise<AgentLockOwner | null> {
  const text = readText(path);
  const owner = text === null ? null : parseOwner(text);
  return owner && isAlive(owner) && (await confirmed(owner, answers)) ? owner : null;
}

/**
 * What the lock says, for `flowsync doctor`, which must neither take nor remove it: no lock, one left by a process
 * that is gone (the next start takes it over), one that cannot be read, or the live process that holds it.
 */
export type LockReading =
  | { state: 'none' }
  | { state: 'damaged' }
  | { state: 'stale'; owner: AgentLockOwner }
  | { state: 'held'; owner: AgentLockOwner };

export function readAgentLock(path = defaultLockPath()): LockReading {
  const text = readText(path);
  if (text === null) return { state: 'none' };
  const owner = parseOwner(text);
  if (owner === null) return { state: 'damaged' };
  return isAlive(owner) ? { state: 'held', owner } : { state: 'stale', owner };
}

/** Where an agent's bridge is: its window address (with its token) and its private socket, if any. */
export interface AgentBridgeAddress {
  bridge: string;
  socket: string | null;
}

/**
 * Asks the agent at a window address whether it is there (the window layer's `bridgeAnswers`): passed in, since
 * this layer knows nothing of the window's protocol.
 */
export type BridgeAnswers = (agent: AgentBridgeAddress) => Promise<boolean>;

/** Whether a live-looking owner is the agent: its start time already matched, or its window answers. */
async function confirmed(owner: AgentLockOwner, answers: BridgeAnswers): Promise<boolean> {
  return (
    owner.processStart !== null ||
    owner.bridge === null ||
    (await answers({ bridge: owner.bridge, socket: owner.socket }))
  );
}

function isAlive(owner: AgentLockOwner): boolean {
  try {
    process.kill(owner.pid, 0);
  } catch (error) {
    // EPERM: the pid runs as another user (an agent started with sudo, say): alive, and not ours to replace.
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  if (owner.processStart === null) return true;
  const now = processStartOf(owner.pid);
  return now === null || now === owner.processStart;
}

/**
 * The start time of a process in clock ticks since boot (field 22 of /proc/<pid>/stat), on Linux; null
 * elsewhere. A pid reused after a crash has another start time.
 */
function processStartOf(pid: number): string | null {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return null;
  }
  // The command name (field 2) is in parentheses and may hold spaces: count fields after its closing one.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return fields[19] ?? null;
}

/**
 * Removes a stale lock without ever removing a live one. Only one process at a time may remove the lock: the one
 * that made the takeover folder (`mkdir` is atomic). Under it, the lock cannot change between the read and the
 * unlink: nobody else removes it, and a new one cannot be linked while it exists. (Moving the lock aside instead
 * let two starts that judged the same stale lock both win: the second moved the first's fresh lock aside, and a
 * third linked its own in the moment before it was put back; test/agent/agent-lock.test.ts.) A takeover folder
 * older than TAKEOVER_STALE_MS was left by a process that died within it, and is removed.
 */
function removeStale(path: string, judged: (text: string) => boolean): void {
  const guard = `${path}.takeover`;
  try {
    mkdirSync(guard);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    // lstat: the guard is a folder this code made, in the private data folder; a link there is not followed.
    const since = lstatSync(guard, { throwIfNoEntry: false })?.mtimeMs;
    if (since !== undefined && Date.now() - since > TAKEOVER_STALE_MS)
      rmSync(guard, { recursive: true, force: true });
    pause(); // another start is taking over right now: look again in a moment
    return;
  }
  try {
    const text = readText(path);
    if (text !== null && judged(text)) unlinkSync(path);
  } finally {
    rmSync(guard, { recursive: true, force: true });
  }
}

/**
 * A takeover takes microseconds; one this old was left by a process that died in it, and a start after such a death
 * waits up to this long (docs/architecture.md, "One agent per user").
 */
export const TAKEOVER_STALE_MS = 10_000;

/** A few milliseconds, without leaving the synchronous acquire. */
function pause(): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 5);
}

/** The complete lock in a file of its own, to be linked in place (created as every temporary file: createExclusive). */
function writeTemp(path: string, owner: AgentLockOwner): string {
  const temp = temporaryNameFor(path);
  createExclusive(temp, lockText(owner), 0o600);
  return temp;
}

function lockText(owner: AgentLockOwner): string {
  return `${JSON.stringify(owner)}\n`;
}

function readText(path: string): string | null {
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
}

function parseOwner(text: string): AgentLockOwner | null {
  try {
    const parsed = ownerSchema.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : null;
  } catch {
    return null; // not JSON: a damaged lock, as good as stale
  }
}
