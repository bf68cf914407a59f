import { Command } from 'commander';
import { createSecretStore, type SecretKind } from '../../secrets/index.ts';
import { printable } from '../../protocol/index.ts';
import { resolveService, urlOption } from '../service-url.ts';

export function logoutCommand(): Command {
  return new Command('logout')
    .description(
      'Removes the user and admin tokens kept for the service from the OS keychain; with --all, also the\n' +
        'personal API key. Variables set in the environment (FLOWSYNC_TOKEN, …) are not touched.',
    )
    .addOption(urlOption())
    .option('--all', 'also remove the personal API key')
    .addHelpText(
      'after',
      '\nExamples:\n  $ flowsync logout\n  $ flowsync logout --all --url http://127.0.0.1:7420',
    )
    .action(async (options: { url?: string; all?: boolean }) => {
      const { url, secrets } = await resolveService(options.url);
      const store = createSecretStore();
      const kinds: SecretKind[] = [
        'access-token',
        'admin-token',
        ...(options.all ? (['api-key'] as const) : []),
      ];
      const removed: SecretKind[] = [];
      for (const kind of kinds) if (await store.delete(secrets, kind)) removed.push(kind);
      const line =
        removed.length > 0
          ? `Signed out of ${url}: removed ${removed.join(', ')} from the OS keychain.`
          : `Nothing to remove: no ${kinds.join(', ')} kept for ${url}.`;
      process.stdout.write(`${printable(line)}\n`);
    });
}
