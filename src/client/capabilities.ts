import type { Capabilities } from '../protocol/index.ts';
import { ProtocolError, RemoteError } from './errors.ts';
import { failureKind, reasonOf } from './failure.ts';
import type { RemoteClient } from './create-client.ts';

/** What a service of the spec alone can do: none of flowsync's extensions. */
export const SPEC_ONLY: Capabilities = {
  bases: false,
  history: false,
  retention_days: 0,
  retention_bytes: 0,
  repo_config_bases: false,
};

/**
 * What a service does beyond the spec: its `capabilities` answer, or SPEC_ONLY for any other answer (feature
 * detection never blocks a sync). flowsync's service answers 404 for a function it lacks; the spec's platform
 * answers 200 "Could not find function", or in production only "[Request ID: …] Server Error"; an older or other
 * service may answer a value of another shape: each means the client sends nothing the spec lacks. What is not an
 * answer about the function is thrown, read as every failure is (failureKind): no answer yet (down, 408), "not now"
 * (429, a 5xx of the platform's own), or a token refused (a person signs in, and the sync could not go on anyway).
 */
export async function askCapabilities(client: RemoteClient, timeoutMs = 5000): Promise<Capabilities> {
  try {
    return await client.flowDef.capabilities({}, { timeoutMs });
  } catch (error) {
    if (isAnswerAboutTheFunction(error)) return SPEC_ONLY;
    throw error;
  }
}

/**
 * An answer that says the service has no such function, in whichever way: a refusal, a redacted "Server Error" of
 * its function, our 404, a 2xx whose value is not a capabilities value. A gateway's page (non-2xx, not JSON) is not.
 */
function isAnswerAboutTheFunction(error: unknown): boolean {
  if (error instanceof ProtocolError) return error.otherValue;
  const kind = failureKind(error);
  if (kind === 'refused') return true;
  return (
    kind === 'server' &&
    error instanceof RemoteError &&
    (error.answer.redacted === true || reasonOf(error) === 'unknown_function')
  );
}

/** As askCapabilities, with null when nothing answered, to be asked again later. */
export async function serviceCapabilities(
  client: RemoteClient,
  timeoutMs = 5000,
): Promise<Capabilities | null> {
  return askCapabilities(client, timeoutMs).catch(() => null);
}
