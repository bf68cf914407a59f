import { logUnexpected } from '../host/index.ts';
import type { Agent } from '../agent/index.ts';
import { activityOf } from './activity.ts';
import type { AgentApi, AgentEvent } from './contract.ts';

/** At most one status push per this many milliseconds: a sync of thousands of files is not a storm of events. */
const THROTTLE_MS = 100;

/**
 * Pushes for windows: the whole AgentStatus, sent on subscribing and after each change of any repository
 * (throttled), and each Recent activity entry as the agent records it. Returns a `subscribe` for the transports.
 */
export function statusEvents(agent: Agent, api: AgentApi) {
  const listeners = new Set<(event: AgentEvent) => void>();
  let timer: NodeJS.Timeout | null = null;
  const send = (event: AgentEvent) => {
    for (const listener of listeners) listener(event);
  };
  const push = async () => {
    timer = null;
    send({ type: 'status', status: await api.status({}) });
  };
  // A push that races the agent's shutdown has nobody left to tell.
  const pushQuietly = () =>
    void push().catch(logUnexpected('pushing the status to windows', () => agent.stopping));
  const schedule = () => {
    if (listeners.size > 0) timer ??= setTimeout(pushQuietly, THROTTLE_MS);
  };
  agent.on('status', schedule);
  agent.on('progress', schedule);
  agent.on('synced', schedule);
  // Few and small (one per file a round touched, at most 20): not throttled.
  activityOf(agent).on('entry', (entry) => send({ type: 'activity', entry }));

  return (listener: (event: AgentEvent) => void) => {
    listeners.add(listener);
    void api
      .status({})
      .then((status) => listener({ type: 'status', status }))
      .catch(logUnexpected('sending a window its first status', () => agent.stopping));
    return () => listeners.delete(listener);
  };
}
