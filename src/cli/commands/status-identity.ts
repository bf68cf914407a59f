import { createClient } from '../../client/index.ts';
import { tokenLabel, type WhoamiValue } from '../../protocol/index.ts';
import { createSecretStore, normalizeServiceUrl, secretStoreAuth } from '../../secrets/index.ts';
import { EXPIRY_WARNING_DAYS } from '../doctor/token.ts';

/** How long status waits for `whoami`: alongside its look at the service, which waits at most 5 s. */
const TIMEOUT_MS = 5000;

const DAY_MS = 86_400_000;

/**
 * Who the service takes you for, as status says it first: asked of a configured service only (the
 * embedded one is yours alone), with the token the agent would send, once. Empty when it does not say (no token, a
 * service without members, no answer): status says what it knows of the service in its other lines.
 */
export async function identityLines(configured: string): Promise<string[]> {
  let url: string;
  try {
    url = normalizeServiceUrl(configured);
  } catch {
    return []; // not an address: status's other lines say so
  }
  const client = createClient({
    baseUrl: url,
    auth: secretStoreAuth(createSecretStore(), url),
    retry: { attempts: 1 },
    timeoutMs: TIMEOUT_MS,
  });
  try {
    return identitySaid(url, await client.members.whoami({}), Date.now());
  } catch {
    return [];
  } finally {
    await client.close();
  }
}

/**
 * `service U as alice (write)`, or `as the shared token`, then a line when the token expires within
 * EXPIRY_WARNING_DAYS (as doctor warns). Pure: `now` is given.
 */
export function identitySaid(url: string, who: WhoamiValue, now: number): string[] {
  if (who.shared)
    return [
      `service ${url} as the shared ${who.role === 'operator' ? 'admin' : 'user'} token: your writes show as "shared token"`,
    ];
  const lines = [`service ${url} as ${who.member} (${who.role})`];
  if (who.expires_at === null) return lines;
  const left = Date.parse(who.expires_at) - now;
  if (left > EXPIRY_WARNING_DAYS * DAY_MS) return lines;
  const days = Math.floor(left / DAY_MS);
  const token = who.token ? `${tokenLabel('member', who.token.replace(/^fsm_/, ''))} ` : '';
  lines.push(
    `  your token ${token}expires ${who.expires_at.slice(0, 10)}, ${days >= 1 ? `in ${days} day${days === 1 ? '' : 's'}` : 'in less than a day'}: \`flowsync doctor\` says what renews it`,
  );
  return lines;
}
