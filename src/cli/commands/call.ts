import { Command } from 'commander';
import { readFileSync } from 'node:fs';
import { createClient, MissingCredentialsError, type AuthProvider } from '../../client/index.ts';
import { findFunction, printable, printableJson, type FunctionPath } from '../../protocol/index.ts';
import { createSecretStore, secretStoreAuth, type SecretStore } from '../../secrets/index.ts';
import { EXIT } from '../exit-codes.ts';
import { resolveService, urlOption } from '../service-url.ts';
import { UsageError } from '../usage-error.ts';

interface CallOptions {
  args?: string;
  argsFile?: string;
  admin?: boolean;
  raw?: boolean;
  url?: string;
}

export function callCommand(): Command {
  return new Command('call')
    .description(
      'Calls a function with the token kept by `flowsync login` (the admin token for operator functions or with\n' +
        '--admin) and prints its value as JSON; --raw prints the whole envelope. `baggage` is filled in, and so is\n' +
        '`api_key` for tracker actions when a personal API key is kept. Exit codes: 0 success, 1 the service\n' +
        'refused the call, 2 usage (bad args, not signed in), 3 the service could not be reached.',
    )
    .argument('<path>', 'the function, e.g. svc/flow_def/action/sync_batch/run (see `flowsync functions`)')
    .argument('[stdin]', '"-" to read the args JSON from stdin')
    .option('--args <json>', 'the args as a JSON object')
    .option('--args-file <file>', 'read the args JSON from a file')
    .option('--admin', 'call with the admin token')
    .option('--raw', 'print the whole reply envelope, also for an error')
    .addOption(urlOption())
    .addHelpText(
      'after',
      '\nExamples:\n' +
        '  $ flowsync call svc/flow_def/action/sync_batch/run --args \'{"repo_owner":"acme","repo_name":"app",\n' +
        '      "flows":[{"flow_path":"flows/hello","files":[{"path":"main.yaml","content":"steps: []\\n",\n' +
        '      "hash":"<sha256 of content>"}]}]}\'\n' +
        '  $ flowsync call svc/tracker/private/workflow_state_cache_get_by_team --args \'{"team_id":"ENG"}\'\n' +
        '  $ jq -n \'{query: "login"}\' | flowsync call svc/tracker/action/issues/search/run -',
    )
    .action(async (path: string, stdin: string | undefined, options: CallOptions) => {
      const spec = findFunction(path);
      if (!spec) throw new UsageError(`No function at ${path}: \`flowsync functions\` lists the 20.`);
      const args = await readArgs(stdin, options);
      const { url, secrets, socketPath } = await resolveService(options.url);
      const store = createSecretStore();
      if (path.startsWith('svc/tracker/action/') && args.api_key === undefined) {
        const secret = await store.get(secrets, 'api-key');
        if (!secret) {
          throw new UsageError(
            `${path} needs your tracker personal API key: run \`flowsync login --api-key\`, set FLOWSYNC_API_KEY, or put api_key in the args.`,
          );
        }
        args.api_key = { secret, type: 'personal-api-key' };
      }
      const client = createClient({
        baseUrl: url,
        auth: options.admin ? adminOnly(store, url, secrets) : secretStoreAuth(store, secrets),
        ...(socketPath && { socketPath }),
      });
      try {
        const { statusCode, envelope } = await client.reply(spec.path as FunctionPath, args as never);
        // The service's words reach the terminal as text, never as escape sequences; the JSON stays the same JSON.
        if (options.raw) {
          process.stdout.write(`${printableJson(envelope)}\n`);
        } else if (envelope.status === 'success') {
          process.stdout.write(`${printableJson(envelope.value ?? null)}\n`);
        } else {
          process.stderr.write(
            `flowsync: ${path} refused (HTTP ${statusCode}): ${printable(envelope.errorMessage ?? '')}\n`,
          );
        }
        process.exitCode = envelope.status === 'success' ? EXIT.ok : EXIT.remote;
      } finally {
        await client.close();
      }
    });
}

function adminOnly(store: SecretStore, url: string, secrets: string): AuthProvider {
  return async () => {
    const token = await store.get(secrets, 'admin-token');
    if (!token)
      throw new MissingCredentialsError(
        `--admin needs an admin token for ${url}: run \`flowsync login --admin\`.`,
      );
    return { scheme: 'Admin', token };
  };
}

async function readArgs(stdin: string | undefined, options: CallOptions): Promise<Record<string, unknown>> {
  if (stdin !== undefined && stdin !== '-') {
    throw new UsageError(
      `Unexpected argument "${stdin}": give the args with --args, --args-file or "-" for stdin.`,
    );
  }
  const sources = [options.args !== undefined, options.argsFile !== undefined, stdin === '-'].filter(Boolean);
  if (sources.length > 1) throw new UsageError('Give the args one way only: --args, --args-file or "-".');
  let text = '{}';
  let from = '--args';
  if (options.args !== undefined) text = options.args;
  if (options.argsFile !== undefined) {
    from = options.argsFile;
    try {
      text = readFileSync(options.argsFile, 'utf8');
    } catch (error) {
      throw new UsageError(
        `Cannot read ${options.argsFile}: ${(error as NodeJS.ErrnoException).code ?? 'error'}.`,
      );
    }
  }
  if (stdin === '-') {
    from = 'stdin';
    text = '';
    for await (const chunk of process.stdin) text += String(chunk);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    // Not the parser's message: it quotes the input, which may hold a secret.
    throw new UsageError(`The args from ${from} are not valid JSON.`);
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json)) {
    throw new UsageError(`The args from ${from} must be a JSON object, like {"team_id":"ENG"}.`);
  }
  return json as Record<string, unknown>;
}
