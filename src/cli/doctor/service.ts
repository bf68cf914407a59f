import { askCapabilities, checkAccess, createClient, type RemoteClient } from '../../client/index.ts';
import { classifyError } from '../../agent/index.ts';
import { defaultServiceDbPath, type AgentLockOwner } from '../../host/index.ts';
import type { Capabilities, DoctorCheck } from '../../protocol/index.ts';
import {
  SECRET_ENV_VARS,
  createSecretStore,
  embeddedSecrets,
  type SecretSource,
} from '../../secrets/index.ts';
import { tokenCheck } from './token.ts';
import { clockVerdict, failure, passed, skipped } from './verdicts.ts';

/** How long doctor waits for the service: one try, as a person waits for a command that looks. */
const TIMEOUT_MS = 5000;

/** The service the agent syncs with: a URL, or the embedded one (`configured` empty). */
export interface ServiceSeen {
  /** The configured URL, normalized; '' for the embedded service. */
  configured: string;
  /** The agent that runs, which runs the embedded service. */
  running: AgentLockOwner | null;
}

/**
 * The service: it answers, takes the token the agent would use (the environment's, else the keychain's), and says
 * what it can do (its capabilities, as the engine asks them); then the clock, from the Date of one answer. The
 * embedded service is asked only where the running agent's lock says it listens: doctor never starts one.
 */
export async function serviceChecks({ configured, running }: ServiceSeen): Promise<DoctorCheck[]> {
  const embedded = configured === '';
  if (embedded && !running?.service)
    return [
      passed(
        'service',
        'service: the embedded one (no service URL is set); it runs inside the agent, so there is nothing to reach ' +
          `while none runs (its database: ${defaultServiceDbPath()})`,
      ),
      passed('clock', "clock: the embedded service runs on this machine's clock"),
    ];
  const url = embedded ? running!.service! : configured;
  const label = embedded ? `the embedded service at ${url}` : `the service at ${url}`;
  const { secret, source } = await createSecretStore().locate(
    embedded ? embeddedSecrets(defaultServiceDbPath()) : url,
    'access-token',
  );
  if (secret === null) {
    if (embedded)
      return [
        passed(
          'service',
          `service: ${label} runs inside the agent (pid ${running!.pid}), with tokens it keeps for this run only`,
        ),
        passed('clock', "clock: the embedded service runs on this machine's clock"),
      ];
    return [
      failure(
        'service',
        source === 'unavailable'
          ? `service: no token for ${url}: the OS keychain does not answer`
          : `service: no token for ${url}: nothing is sent until you sign in`,
        source === 'unavailable'
          ? `set ${SECRET_ENV_VARS['access-token']}, or fix the keychain and run \`flowsync login --url ${url}\``
          : `flowsync login --url ${url}`,
      ),
      skipped('clock', 'clock: not compared: no token to call the service with'),
    ];
  }
  const client = createClient({
    baseUrl: url,
    auth: { userToken: secret },
    retry: { attempts: 1 },
    timeoutMs: TIMEOUT_MS,
  });
  try {
    let capabilities: Capabilities;
    try {
      await checkAccess(client);
      capabilities = await askCapabilities(client, TIMEOUT_MS);
    } catch (error) {
      // A refusal is an answer, with a Date; no answer has none.
      const unreachable = classifyError(error)?.kind === 'unreachable';
      return [
        serviceFailure(error, { url, label, source, embedded }),
        unreachable
          ? skipped('clock', 'clock: not compared: the service does not answer')
          : await clockCheck(client),
      ];
    }
    // Who the token says you are, and whether it nears its end (not for the embedded service's own tokens).
    const token = embedded
      ? passed(
          'token',
          "token: the embedded service's own, made by the agent for each run (it does not expire)",
        )
      : await tokenCheck(client, source, TIMEOUT_MS);
    return [
      passed(
        'service',
        `service: ${label} answers and takes your token (${from(source)}); ${can(capabilities)}`,
      ),
      ...(token ? [token] : []),
      embedded
        ? passed('clock', "clock: the embedded service runs on this machine's clock")
        : await clockCheck(client),
    ];
  } finally {
    await client.close();
  }
}

/** One answer's Date against this machine's clock; an answer that is a refusal has one too. */
async function clockCheck(client: RemoteClient): Promise<DoctorCheck> {
  const sentAt = Date.now();
  try {
    const reply = await client.reply('svc/flow_def/public/capabilities', {}, { timeoutMs: TIMEOUT_MS });
    return clockVerdict(reply.date, sentAt, Date.now());
  } catch {
    // No answer, one that cannot be read (not JSON: a proxy's page), or a system error of the platform (thrown,
    // its Date not kept): nothing to compare with. An error envelope is returned with its Date.
    return skipped('clock', 'clock: not compared: no answer of the service to compare with');
  }
}

function from(source: SecretSource): string {
  return source === 'environment' ? `from ${SECRET_ENV_VARS['access-token']}` : 'from the OS keychain';
}

function can(capabilities: Capabilities): string {
  if (!capabilities.bases && !capabilities.history)
    return "it implements the spec alone: no history, no conflict check (the last writer wins: a teammate's change to a file you also changed is overwritten), deletions sent as full listings";
  const kept = capabilities.history
    ? `keeps each file's versions ${capabilities.retention_days} days`
    : 'keeps no history';
  return `${kept}${capabilities.bases ? ' and holds conflicting edits as conflicts' : ''}`;
}

/** What a failed call to the service means, read by the agent's one classifier, and what to do about it. */
function serviceFailure(
  error: unknown,
  { url, label, source, embedded }: { url: string; label: string; source: SecretSource; embedded: boolean },
): DoctorCheck {
  const classified = classifyError(error);
  const said = classified?.message ?? (error as Error).message;
  switch (classified?.kind) {
    case 'unreachable':
      return failure(
        'service',
        // The client's line names the address and the error (ECONNREFUSED, a time-out).
        `service: ${said}`,
        embedded
          ? 'the agent runs it: stop the agent and start it again'
          : `check the address (--url, FLOWSYNC_URL, or serviceUrl in the config file) and that the service runs ` +
              '(`flowsync serve` for one on this machine)',
      );
    case 'unauthorized':
      return failure(
        'service',
        `service: ${label} refuses your token (${from(source)}): ${said}`,
        source === 'environment'
          ? `set ${SECRET_ENV_VARS['access-token']} to a token this service gave you`
          : embedded
            ? 'restart the agent: it issues new tokens for its own service'
            : `sign in again: flowsync login --url ${url}`,
      );
    case 'throttled':
    case 'server':
      return failure(
        'service',
        `service: ${label} answers with an error: ${said}`,
        "try again later; if it lasts, give the service's operator this line (its trace id)",
      );
    default:
      return failure(
        'service',
        `service: ${label}: ${said}`,
        'check the address (--url, FLOWSYNC_URL, or serviceUrl in the config file)',
      );
  }
}
