import { Command } from 'commander';
import { createClient, RemoteError } from '../../client/index.ts';
import { printable, type WhoamiValue } from '../../protocol/index.ts';
import { createSecretStore, secretStoreAuth } from '../../secrets/index.ts';
import { resolveService, urlOption } from '../service-url.ts';

export function whoamiCommand(): Command {
  return new Command('whoami')
    .description(
      "Who the service takes you for: the member your token belongs to, their role, the token's id and expiry\n" +
        '(the service decides it from the token; what the client says about itself is only a device label).',
    )
    .addOption(urlOption())
    .option('--json', 'print it as JSON')
    .addHelpText(
      'after',
      '\nExamples:\n' +
        '  $ flowsync whoami\n' +
        '  $ flowsync whoami --url https://flows.example.com --json   # the token of that service, as JSON',
    )
    .action(async (options: { url?: string; json?: boolean }) => {
      const { url, secrets, socketPath } = await resolveService(options.url);
      const client = createClient({
        baseUrl: url,
        auth: secretStoreAuth(createSecretStore(), secrets),
        ...(socketPath && { socketPath }),
      });
      let value: WhoamiValue;
      try {
        value = await client.members.whoami({});
      } catch (error) {
        // A service without members (the spec's, an older flowsync): no identity beyond "a user token".
        if (error instanceof RemoteError && error.statusCode === 404) {
          process.stdout.write(
            `${printable(`${url} has no members (a service of the spec, or an older flowsync): it knows only user and admin tokens.`)}\n`,
          );
          return;
        }
        throw error;
      } finally {
        await client.close();
      }
      if (options.json) {
        process.stdout.write(`${JSON.stringify({ url, ...value }, null, 2)}\n`);
        return;
      }
      process.stdout.write(`${printable(whoamiLine(url, value))}\n`);
    });
}

/** `alice (write) on U · token fsm_3kT9… "laptop" · expires 2027-11-27`, or what the shared token means. */
export function whoamiLine(url: string, value: WhoamiValue): string {
  if (value.shared)
    return `The shared ${value.role === 'operator' ? 'admin' : 'user'} token (${value.role}) on ${url}: your writes show as "shared token". Ask an operator for an invite of your own.`;
  const parts = [`${value.member} (${value.role}) on ${url}`];
  if (value.token) parts.push(`token ${value.token}… "${value.label ?? ''}"`);
  if (value.expires_at) parts.push(`expires ${value.expires_at.slice(0, 10)}`);
  return parts.join(' · ');
}
