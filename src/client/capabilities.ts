import type { Capabilities } from '../protocol/index.ts';
import { reasonOf } from './failure.ts';
import type { RemoteClient } from './create-client.ts';

/** What a service of the spec alone can do: none of flowsync's extensions. */
export const SPEC_ONLY: Capabilities = {
  bases: false,
  history: false,
  retention_days: 0,
  retention_bytes: 0,
};

/**
 * What a service does beyond the spec: its `capabilities` answer; SPEC_ONLY when it does not know the function
 * (a 404 for it: a service of the spec alone, or a gateway missing the route, which is the safe reading: the
 * client then sends nothing the spec lacks). Any other failure is thrown, read as every failure is (failureKind).
 */
export async function askCapabilities(client: RemoteClient, timeoutMs = 5000): Promise<Capabilities> {
  try {
    return await client.flowDef.capabilities({}, { timeoutMs });
  } catch (error) {
    if (reasonOf(error) === 'unknown_function') return SPEC_ONLY;
    throw error;
  }
}

/** As askCapabilities, with null when nothing answered, to be asked again later. */
export async function serviceCapabilities(
  client: RemoteClient,
  timeoutMs = 5000,
): Promise<Capabilities | null> {
  return askCapabilities(client, timeoutMs).catch(() => null);
}
