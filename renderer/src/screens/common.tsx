import { useQuery, type QueryClient, type QueryKey } from '@tanstack/react-query';
import type { AgentApi } from '../../../src/agent/index.ts';

export interface ScreenProps {
  api: AgentApi;
}

/**
 * Puts what the agent has just answered in the cache. A read of the same key still on its way was answered from
 * older data: it is cancelled first, or it lands after this and takes it back (on a loaded machine, the Settings
 * screen's first read came back after a key was saved, and showed "none").
 */
export async function replaceCached(queries: QueryClient, key: QueryKey, value: unknown): Promise<void> {
  await queries.cancelQueries({ queryKey: key, exact: true });
  queries.setQueryData(key, value);
}

/** The agent's status, kept fresh by the pushed events (see App). */
export function useStatus(api: AgentApi) {
  return useQuery({ queryKey: ['status'], queryFn: () => api.status({}) });
}

/** An error where it happened, announced to screen readers. */
export function ErrorLine({ error }: { error: unknown }) {
  if (!error) return null;
  return (
    <p role="alert" className="error">
      {error instanceof Error ? error.message : String(error)}
    </p>
  );
}
