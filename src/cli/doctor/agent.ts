import { tilde } from '../../agent/index.ts';
import { defaultLockPath, readAgentLock, type AgentLockOwner } from '../../host/index.ts';
import { plural, type DoctorCheck } from '../../protocol/index.ts';
import { bridgeAnswers } from '../../window/index.ts';
import { failure, passed, warning } from './verdicts.ts';

export interface AgentSeen {
  check: DoctorCheck;
  /** The agent (start or ui) that runs, whose embedded service the service check asks; null when none does. */
  running: AgentLockOwner | null;
}

const START = '`flowsync start` (`flowsync autostart enable` starts it when you log in)';

/**
 * Who holds the agent lock, read without taking it (doctor must not be a second agent): a live agent whose window
 * answers, a `flowsync sync`, an agent still starting, one that no longer answers, or none.
 */
export async function agentCheck(repositories: number, lockPath = defaultLockPath()): Promise<AgentSeen> {
  const lock = readAgentLock(lockPath);
  if (lock.state !== 'held') {
    const left =
      lock.state === 'stale'
        ? ` (${tilde(lockPath)} was left by pid ${lock.owner.pid}, which is gone: the next start takes it over)`
        : lock.state === 'damaged'
          ? ` (${tilde(lockPath)} cannot be read: the next start replaces it)`
          : '';
    const check =
      repositories === 0
        ? passed('agent', `agent: not running, and no repository is set up yet${left}`)
        : warning(
            'agent',
            `agent: not running, so your ${plural(repositories, 'repository', 'repositories')} ` +
              `${repositories === 1 ? 'is' : 'are'} not synced now${left}`,
            START,
          );
    return { check, running: null };
  }
  const { owner } = lock;
  const since = `since ${owner.startedAt.slice(0, 19).replace('T', ' ')} UTC`;
  if (owner.command === 'sync')
    return {
      check: passed(
        'agent',
        `agent: not running; \`flowsync sync\` holds the agent lock (pid ${owner.pid}, ${since})`,
      ),
      running: null,
    };
  if (owner.bridge === null)
    return {
      check: passed(
        'agent',
        `agent: starting (pid ${owner.pid}, ${since}); its window opens after the first sync`,
      ),
      running: owner,
    };
  const origin = new URL(owner.bridge).origin;
  if (!(await bridgeAnswers({ bridge: owner.bridge, socket: owner.socket })))
    return {
      check: failure(
        'agent',
        `agent: pid ${owner.pid} holds the agent lock (${since}) but its window at ${origin} does not answer: it is stuck`,
        `stop it (kill ${owner.pid}) and run ${START}`,
      ),
      running: owner, // its embedded service may still answer: asked all the same
    };
  // An older agent's lock names no socket either: only a running agent of this flowsync is said to lack one.
  if (owner.socket === null && process.platform !== 'win32')
    return {
      check: warning(
        'agent',
        `agent: running (pid ${owner.pid}, ${since}), window at ${origin}/, without a private socket: ` +
          'commands reach it over the window’s port, which other users of this machine can crowd',
        'a shorter data folder ($XDG_DATA_HOME) or a $XDG_RUNTIME_DIR lets the next start make one (its path must ' +
          'fit 100 bytes), then restart the agent',
      ),
      running: owner,
    };
  return {
    check: passed('agent', `agent: running (pid ${owner.pid}, ${since}), window at ${origin}/`),
    running: owner,
  };
}
