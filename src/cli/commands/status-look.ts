import { setTimeout as sleep } from 'node:timers/promises';
import { Agent, configuredRepository, type AgentConfig } from '../../agent/index.ts';
import { AgentLock, claimAgentLock, type BridgeAnswers } from '../../host/index.ts';
import type { FreshLook } from '../../sync/index.ts';

/** A repository's look, and the rename waiting for it when the agent could open it (undefined: not known). */
export type StatusLook = FreshLook & { rename?: string | null };

/** How long closing the agent opened for the look is waited for: a look still waiting on the service is not. */
const CLOSE_MS = 1000;

/**
 * `flowsync status` with no agent running looks at the service itself before it speaks: a teammate's edit
 * was "0 pending" and exit 0 until an agent ran. An agent is opened for the look alone (the state's, holding the
 * agent lock as `flowsync sync` does, so that what the look records, files newer there, is the state's and
 * `flowsync resolve --newer` takes them), each repository's quick check made (engine.lookNow, one-shot: no round
 * after it, nothing sent), waited for at most 5 s. Loaded only then: `status` with an agent running stays light.
 *
 * Returns each repository's look (by root); none for one that could not be looked at because another flowsync holds
 * the state now (an agent starting, a `flowsync sync`: it looks itself). A failure to open the agent (no token, say)
 * is every repository's look failing, with its words. With each look, the line of the rename waiting for the
 * repository (null: none), as the agent found it opening it: status says it without asking git once more.
 * `answers`: whether a lock's owner answers on its bridge, given by status, which loads the window's client for it
 * only when a lock names a live process (not when none runs).
 */
export async function lookWithoutAgent(
  config: AgentConfig,
  serviceUrl: string | undefined,
  roots: readonly string[],
  answers: BridgeAnswers,
): Promise<Map<string, StatusLook>> {
  const looks = new Map<string, StatusLook>();
  if (roots.length === 0) return looks;
  const lock = await claimAgentLock('sync', answers);
  if (!(lock instanceof AgentLock)) return looks;
  let agent: Agent | null = null;
  try {
    agent = await Agent.open({ config, serviceUrl, stateUnchecked: true });
    const opened = agent;
    await Promise.all(
      roots.map(async (root) => {
        const watched = await opened.addRepository(root, configuredRepository(config, root)).catch(
          // Not synced from here now (another checkout is its source, its folder gone): its status says so.
          () => null,
        );
        if (!watched) return;
        const rename = opened.describe(watched.identity.root)?.rename?.message ?? null;
        looks.set(root, { ...(await watched.engine.lookNow({ oneShot: true })), rename });
      }),
    );
  } catch (error) {
    const failure = error instanceof Error ? error.message : String(error);
    for (const root of roots) looks.set(root, { at: null, live: false, fresh: false, failure });
  } finally {
    // A look still waiting on a service that does not answer is not waited for: `status` exits with its answer.
    if (agent) await Promise.race([agent.close(), sleep(CLOSE_MS, undefined, { ref: false })]);
    lock.release();
  }
  return looks;
}
