import { Command } from 'commander';
import { loadConfig, saveConfig } from '../../agent/index.ts';
import { RemoteError, checkAccess, createClient, type ClientAuth } from '../../client/index.ts';
import {
  SECRET_ENV_VARS,
  accountFor,
  createSecretStore,
  maskSecret,
  secretStoreAuth,
  type SecretKind,
} from '../../secrets/index.ts';
import { readSecret } from '../read-secret.ts';
import { resolveServiceUrl, urlOption } from '../service-url.ts';

interface LoginOptions {
  url?: string;
  admin?: boolean;
  apiKey?: boolean;
}

const WHAT: Record<SecretKind, string> = {
  'access-token': 'user token',
  'admin-token': 'admin token',
  'api-key': 'personal API key',
};

export function loginCommand(): Command {
  return new Command('login')
    .summary('check a token with the service and keep it in the OS keychain')
    .description(
      'Reads a token (hidden prompt, or the first line of stdin), checks it with the service, and keeps it in\n' +
        'the OS keychain under "flowsync", account "<url>#<kind>". Never written to a file. `flowsync serve`\n' +
        'prints the user and admin tokens on its first start. With --url the address is also saved as the\n' +
        "config file's serviceUrl, so later commands use it.",
    )
    .addOption(urlOption())
    .option('--admin', 'an admin (operator) token instead of a user token')
    .option('--api-key', 'your tracker personal API key (for the tracker functions) instead of a token')
    .addHelpText(
      'after',
      '\nExamples:\n' +
        '  $ flowsync login                              # paste the user token at the prompt\n' +
        '  $ flowsync login --admin --url http://127.0.0.1:7420\n' +
        '  $ printf %s "$FLOWSYNC_TOKEN" | flowsync login  # from a script',
    )
    .action(async (options: LoginOptions) => {
      const url = resolveServiceUrl(options.url);
      const kind: SecretKind = options.admin ? 'admin-token' : options.apiKey ? 'api-key' : 'access-token';
      const store = createSecretStore();
      const secret = await readSecret(`${WHAT[kind]} for ${url}`);

      await checkWithService(url, kind, secret, secretStoreAuth(store, url));
      await store.set(url, kind, secret);
      if (options.url !== undefined) saveConfig({ ...loadConfig(), serviceUrl: url });

      process.stdout.write(
        `Signed in to ${url}: ${WHAT[kind]} ${maskSecret(secret)} is in the OS keychain (flowsync / ${accountFor(url, kind)}).\n`,
      );
      const envVar = SECRET_ENV_VARS[kind];
      if (process.env[envVar]) {
        process.stderr.write(`Note: ${envVar} is set in this shell and is used instead of the keychain.\n`);
      }
    });
}

/** Proves the secret works with one call that changes nothing; a refusal says what to do in one line. */
async function checkWithService(url: string, kind: SecretKind, secret: string, storedAuth: ClientAuth) {
  const auth: ClientAuth =
    kind === 'admin-token'
      ? { adminToken: secret }
      : kind === 'access-token'
        ? { userToken: secret }
        : storedAuth;
  const client = createClient({ baseUrl: url, auth, retry: { attempts: 2 } });
  try {
    if (kind === 'admin-token') {
      await client.tracker.workflowStateCacheGetByTeam({ team_id: 'flowsync-login-check' });
    } else if (kind === 'access-token') {
      await checkAccess(client);
    } else {
      await client.tracker.viewer({ api_key: { secret, type: 'personal-api-key' } });
    }
  } catch (error) {
    if (error instanceof RemoteError && (error.statusCode === 401 || error.statusCode === 403)) {
      throw new RemoteError(
        error.path,
        error.statusCode,
        refusal(kind, url, error),
        error.errorData,
        error.traceId,
      );
    }
    throw error;
  } finally {
    await client.close();
  }
}

function refusal(kind: SecretKind, url: string, error: RemoteError): string {
  if (kind === 'api-key' && error.reason === 'unknown_api_key') {
    return `${url} does not know this personal API key: an operator registers it with add_activity (key-created).`;
  }
  if (kind === 'api-key')
    return `sign in with \`flowsync login\` first: checking an API key needs a user token.`;
  if (kind === 'admin-token' && error.statusCode === 403) {
    return `that is a user token, not an admin token: run \`flowsync login\` without --admin.`;
  }
  return `${url} does not accept this ${WHAT[kind]}: check it was copied whole (\`flowsync serve\` prints both tokens on first start).`;
}
