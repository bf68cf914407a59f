import { Command, Option } from 'commander';
import { databaseOption, parsePort, parseWholeNumber } from '../options.ts';
import { DEFAULT_SERVICE_PORT } from '../../agent/index.ts';

export function serveCommand(): Command {
  return new Command('serve')
    .description(
      'Run the remote-function service over HTTP, backed by a SQLite file (one process) or a Postgres database\n' +
        '(any number of processes behind a load balancer). On the first start of a database it creates a user\n' +
        'token and an admin token and prints them once; only their SHA-256 is stored.',
    )
    .option('--host <host>', 'address to listen on', '127.0.0.1')
    .option('--port <port>', 'port to listen on (0 = any free port)', parsePort, DEFAULT_SERVICE_PORT)
    .addOption(
      databaseOption(
        'SQLite database file, or a Postgres URL (postgres://user:password@host/db) that several service processes share',
      ),
    )
    .option(
      '--new-tokens',
      'replace the stored tokens with new ones and print them (the old ones stop working)',
    )
    .option(
      '--no-self-renew',
      "members' tokens are not renewed by their agents: each ends at its expiry (a new invite then)",
    )
    .addOption(
      new Option('--log-level <level>', 'how much to log (to stderr, or --log-file)')
        .choices(['fatal', 'error', 'warn', 'info', 'debug', 'silent'])
        .default('info'),
    )
    .option(
      '--log-file <file>',
      'log to this file (0600, moved to <file>.1 at 5 MiB) instead of stderr (on a terminal: serve.log in the data folder)',
    )
    .option(
      '--history-days <days>',
      'keep every replaced or deleted version of a flow file this many days',
      parseWholeNumber(1),
      30,
    )
    .option(
      '--history-max-mb <mib>',
      'and at most this many MiB of them per repository, the oldest pruned first',
      parseWholeNumber(1),
      256,
    )
    .addHelpText(
      'after',
      '\nExamples:\n' +
        '  $ flowsync serve\n' +
        '  $ flowsync serve --port 8080 --db ./service.db\n' +
        '  $ FLOWSYNC_DB=postgres://flowsync:secret@db.internal/flowsync flowsync serve --host 0.0.0.0\n' +
        '  $ curl -X POST http://127.0.0.1:7420/api/run/svc/tracker/private/workflow_state_cache_get_by_team \\\n' +
        '      -H "Authorization: Admin $ADMIN_TOKEN" -H "Content-Type: application/json" \\\n' +
        `      -d '{"args":{"baggage":{"trace_id":"t1","traffic_type":"external"},"team_id":"ENG"}}'`,
    )
    .action(
      async (options: {
        host: string;
        port: number;
        db: string;
        newTokens?: boolean;
        selfRenew: boolean;
        logLevel: string;
        logFile?: string;
        historyDays: number;
        historyMaxMb: number;
      }) => {
        // Loaded here, not at the top: other commands (and --help) should not pay for the server's start-up.
        const [
          { createService, memberRateFromEnv, TEAM_MAX_CONNECTIONS },
          { defaultServeLogPath, keepMemoryLow, openLogFile },
        ] = await Promise.all([import('../../service/index.ts'), import('../../host/index.ts')]);
        // On a terminal the human lines only: the JSON log goes to a file, named below (stderr to a pipe or a
        // journal stays the log, as a service manager expects).
        const logFile = options.logFile ?? (process.stderr.isTTY ? defaultServeLogPath() : undefined);
        const service = await createService({
          dbPath: options.db,
          host: options.host,
          port: options.port,
          newTokens: options.newTokens ?? false,
          selfRenew: options.selfRenew,
          maxConnections: TEAM_MAX_CONNECTIONS,
          logLevel: options.logLevel as 'info',
          logDestination: logFile ? openLogFile(logFile) : undefined,
          retention: { days: options.historyDays, bytes: options.historyMaxMb * 1024 * 1024 },
          // One runaway script of a member cannot starve the team (429 with Retry-After).
          memberRate: memberRateFromEnv(),
        });
        // Installed before the address is printed, so a caller that stops us as soon as we are up is heard.
        const stop = async (signal: string) => {
          process.stderr.write(`\n${signal}: stopping the service…\n`);
          // A connection that never finishes must not keep the process alive: give up waiting after 5 s.
          setTimeout(() => process.exit(0), 5_000).unref();
          await service.close();
          process.exit(0);
        };
        // What an ingest took is given back once the service is at rest (docs/memory.md).
        keepMemoryLow();
        process.once('SIGINT', () => void stop('SIGINT'));
        process.once('SIGTERM', () => void stop('SIGTERM'));
        const out = process.stdout;
        out.write(`flowsync service listening on ${service.url}\n`);
        // Without the password a Postgres URL may carry.
        out.write(`database: ${service.database}\n`);
        if (logFile && !options.logFile)
          out.write(`log: ${logFile} (JSON lines; --log-file sets another file)\n`);
        if (service.issuedTokens) {
          out.write(
            '\nNew tokens, shown this once (only their SHA-256 is stored; `flowsync serve --new-tokens` replaces them):\n' +
              `  user token:   ${service.issuedTokens.user}\n` +
              `  admin token:  ${service.issuedTokens.admin}\n` +
              `Send them as "Authorization: Bearer <user token>" or "Authorization: Admin <admin token>".\n`,
          );
        }
        out.write('Press Ctrl-C to stop.\n');
      },
    );
}
