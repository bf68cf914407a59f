import { Command } from 'commander';
import { plural } from '../../protocol/index.ts';
import { databaseOption } from '../options.ts';
import { ProgressDisplay } from '../progress.ts';
import { UsageError } from '../usage-error.ts';
import { auditCommand, memberCommand, tokenCommand } from './members.ts';
import type { TransferProgress } from '../../service/index.ts';

const DB_HELP = "the service's database: a SQLite file (as `flowsync serve`'s) or a postgres:// URL";

export function serviceCommand(): Command {
  return new Command('service')
    .usage('<export|import|member|token|audit> [options]')
    .description(
      "Moves a service's data between databases: `export` writes every row (flows, their history, the\n" +
        "tokens' SHA-256, the members, the tracker store, the logs) to one file, `import` fills an empty database\n" +
        'from it. From SQLite to Postgres when a team outgrows one service process, and back. `member` and\n' +
        "`token` manage the team's members and their tokens; `audit` shows (and verifies) the audit log.",
    )
    .addCommand(exportCommand())
    .addCommand(importCommand())
    .addCommand(memberCommand())
    .addCommand(tokenCommand())
    .addCommand(auditCommand())
    .addHelpText(
      'after',
      '\nExamples:\n' +
        '  $ flowsync service export --db ~/.local/share/flowsync/service.db --out service.jsonl\n' +
        '  $ flowsync service import --db postgres://flowsync@db.internal/flowsync --in service.jsonl\n' +
        '  $ flowsync service member add alice --role write',
    );
}

function exportCommand(): Command {
  return new Command('export')
    .summary('write every row of the database to a file')
    .description(
      "Writes every row of the service's database to a file (JSON lines, 0600: it holds the tokens' SHA-256\n" +
        "and every flow's content), read in one snapshot: a running `flowsync serve` may go on meanwhile, and\n" +
        'the file holds the database as it was at one moment. Two exports of the same data are the same bytes,\n' +
        'whichever database they come from (but for the header line, which names it).',
    )
    .addOption(databaseOption(DB_HELP))
    .requiredOption('--out <file>', 'the file to write')
    .option('--force', 'replace the file if it exists')
    .addHelpText('after', '\nExample:\n  $ flowsync service export --out service.jsonl')
    .action(async (options: { db: string; out: string; force?: boolean }) => {
      const { exportService } = await import('../../service/index.ts');
      const summary = await refusalsAsUsage(() =>
        withProgress('exporting', (onProgress) => exportService({ ...options, onProgress })),
      );
      process.stdout.write(`exported ${counted(summary)} to ${options.out}\n`);
    });
}

function importCommand(): Command {
  return new Command('import')
    .summary('fill an empty database from an export (stop the service first)')
    .description(
      'Fills an empty service database from a file `flowsync service export` wrote, in one transaction, then\n' +
        "counts each table against the export's. The database must hold no rows: a new SQLite file, or a new\n" +
        'Postgres database (createdb); its tables are created as `flowsync serve` creates them. Stop the\n' +
        "service first: rows it wrote meanwhile would make the database not empty, or not the export's.",
    )
    .addOption(databaseOption(DB_HELP))
    .requiredOption('--in <file>', 'the export to read')
    .addHelpText(
      'after',
      '\nExample:\n  $ flowsync service import --db postgres://flowsync@db.internal/flowsync --in service.jsonl',
    )
    .action(async (options: { db: string; in: string }) => {
      const { importService } = await import('../../service/index.ts');
      const summary = await refusalsAsUsage(() =>
        withProgress('importing', (onProgress) =>
          importService({ db: options.db, input: options.in, onProgress }),
        ),
      );
      process.stdout.write(
        `imported ${counted(summary)} into ${summary.database}; each table's count matches the export's\n`,
      );
    });
}

function counted(summary: { tables: number; rows: number }): string {
  return `${plural(summary.tables, 'table')}, ${plural(summary.rows, 'row')}`;
}

/** The service's refusals (a file that is not an export, a database not empty) are the user's to fix: exit 2. */
async function refusalsAsUsage<T>(work: () => Promise<T>): Promise<T> {
  const { TransferRefused } = await import('../../service/index.ts');
  try {
    return await work();
  } catch (error) {
    throw error instanceof TransferRefused ? new UsageError(error.message) : error;
  }
}

/**
 * Progress on standard error: a bar of rows done out of all on a terminal, a line per table elsewhere (a log or a
 * script should not fill up with redraws).
 */
async function withProgress<T>(
  verb: string,
  work: (onProgress: (progress: TransferProgress) => void) => Promise<T>,
): Promise<T> {
  const stream = process.stderr;
  const bar = stream.isTTY ? new ProgressDisplay(stream) : null;
  try {
    return await work((progress) => {
      if (bar) bar.update(verb, progress.done, progress.total);
      else if (progress.tableDone === progress.tableRows)
        stream.write(`${verb} ${progress.table}: ${plural(progress.tableRows, 'row')}\n`);
    });
  } finally {
    bar?.stop();
  }
}
