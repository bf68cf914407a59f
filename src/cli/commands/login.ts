import { Command } from 'commander';
import { SECRET_NAMES, checkSecret, claimApiKey, loadConfig, saveConfig } from '../../agent/index.ts';
import { printable } from '../../protocol/index.ts';
import {
  SECRET_ENV_VARS,
  accountFor,
  createSecretStore,
  maskSecret,
  secretStoreAuth,
  type SecretKind,
} from '../../secrets/index.ts';
import { readSecret } from '../read-secret.ts';
import { UsageError } from '../usage-error.ts';
import { redeemInvite } from './invite-login.ts';
import { resolveService, urlOption } from '../service-url.ts';

interface LoginOptions {
  url?: string;
  admin?: boolean;
  apiKey?: boolean;
  invite?: boolean;
  printToken?: boolean;
  label?: string;
}

export function loginCommand(): Command {
  return new Command('login')
    .description(
      'Reads a token (hidden prompt, or the first line of stdin), checks it with the service, and keeps it in\n' +
        'the OS keychain under "flowsync", account "<url>#<kind>". Never written to a file. `flowsync serve`\n' +
        'prints the user and admin tokens on its first start. With --url the address is also saved as the\n' +
        "config file's serviceUrl, so later commands use it.",
    )
    .addOption(urlOption())
    .option('--admin', 'an admin (operator) token instead of a user token')
    .option('--api-key', 'your tracker personal API key (for the tracker functions) instead of a token')
    .option(
      '--invite',
      "redeem an operator's one-time invite (fsi_…, read from a hidden prompt or stdin) for your own token",
    )
    .option('--print-token', 'with --invite: print the token once and keep nothing (for a CI secret store)')
    .option(
      '--label <name>',
      "with --invite: what the token is for, in `member list` (default: this machine's name)",
    )
    .addHelpText(
      'after',
      '\nExamples:\n' +
        '  $ flowsync login                              # paste the user token at the prompt\n' +
        '  $ flowsync login --admin --url http://127.0.0.1:7420\n' +
        '  $ printf %s "$FLOWSYNC_TOKEN" | flowsync login  # from a script\n' +
        '  $ flowsync login --url https://flows.example.com --invite   # paste the invite an operator sent',
    )
    .action(async (options: LoginOptions) => {
      if (!options.invite && (options.printToken || options.label !== undefined))
        throw new UsageError('--print-token and --label go with --invite.');
      const { url, secrets } = await resolveService(options.url);
      if (options.invite) {
        if (options.admin || options.apiKey)
          throw new UsageError('--invite takes neither --admin nor --api-key.');
        await redeemInvite(url, secrets, options);
        if (options.url && !options.printToken) saveConfig({ ...loadConfig(), serviceUrl: url });
        return;
      }
      const kind: SecretKind = options.admin ? 'admin-token' : options.apiKey ? 'api-key' : 'access-token';
      const store = createSecretStore();
      const secret = await readSecret(`${SECRET_NAMES[kind]} for ${url}`);

      // A personal API key is registered to its user here when it is nobody's and the admin token allows.
      let who: string | null = null;
      if (kind === 'api-key') who = await claimApiKey(url, secret, secretStoreAuth(store, secrets));
      else await checkSecret(url, kind, secret);
      await store.set(secrets, kind, secret);
      // Only an address given here is saved: `--url ''` names none, and saving what it fell through to would pin
      // the running agent's embedded service (at whichever port it got this time) as a remote URL.
      if (options.url) saveConfig({ ...loadConfig(), serviceUrl: url });

      // The URL is a config value: printed as text, whatever it holds.
      process.stdout.write(
        `${printable(`Signed in to ${url}: ${SECRET_NAMES[kind]} ${maskSecret(secret)} is in the OS keychain (flowsync / ${accountFor(secrets, kind)}).`)}\n`,
      );
      if (who) process.stdout.write(`${printable(who)}\n`);
      const envVar = SECRET_ENV_VARS[kind];
      if (process.env[envVar]) {
        process.stderr.write(`Note: ${envVar} is set in this shell and is used instead of the keychain.\n`);
      }
    });
}
