import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { plural } from '../../protocol/index.ts';
import type { ServiceDatabase, Sql } from '../db/open.ts';
import { valueRows } from '../db/rows.ts';
import { countRows, TRANSFER_TABLES, type TransferTable } from './catalog.ts';
import { openTransferDatabase } from './database.ts';
import { parseHeader, parseRow, TransferRefused, widenRow, type ExportHeader, type Value } from './format.ts';
import { ProgressCounter, type OnProgress, type TransferSummary } from './progress.ts';
import { refusedRow } from './row-rules.ts';

/**
 * Rows inserted by one statement, and the text they may carry: few statements (a round trip each on Postgres),
 * none large. 30,000 parameters at most stays under SQLite's limit (32,766) and Postgres's (65,535).
 */
const BATCH_ROWS = 500;
const BATCH_PARAMETERS = 30_000;
const BATCH_BYTES = 4 * 1024 * 1024;

export interface ImportOptions {
  /** The database to fill: a SQLite file (created when missing) or a Postgres URL. It must hold no rows. */
  db: string;
  /** A file `flowsync service export` wrote. */
  input: string;
  onProgress?: OnProgress;
}

/**
 * Fills an empty service database from an export, whichever database the export came from. The file is read
 * through once before anything is written (a file cut short, edited or of a newer flowsync is refused, and the
 * database is not touched), then again inside one transaction: the rows, Postgres's identity sequences moved past
 * the numbers imported, and each table counted against the export's header. Anything wrong and nothing is kept.
 */
export async function importService(options: ImportOptions): Promise<TransferSummary> {
  const { input } = options;
  const header = await checkFile(input);
  const db = await openTransferDatabase(options.db, 'import');
  try {
    const total = Object.values(header.tables).reduce((sum, { rows }) => sum + rows, 0);
    await db.transaction(async (sql) => {
      await refuseUnlessEmpty(sql, db);
      // In the transaction, from the start of the file: Postgres runs it again after a deadlock.
      const progress = new ProgressCounter(total, options.onProgress);
      await insertRows(sql, input, header, progress);
      if (sql.dialect === 'postgres') await moveSequences(sql);
      await checkCounts(sql, header);
    });
    return { tables: TRANSFER_TABLES.length, rows: total, database: db.location };
  } finally {
    await db.close();
  }
}

/** The file's lines, one at a time (a file of any size). */
async function* linesOf(file: string): AsyncGenerator<string> {
  const stream = createReadStream(file, { encoding: 'utf8' });
  try {
    yield* createInterface({ input: stream, crlfDelay: Infinity });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT')
      throw new TransferRefused(
        `${file} does not exist: give --in the file \`flowsync service export\` wrote.`,
      );
    throw error;
  } finally {
    stream.destroy();
  }
}

/**
 * Reads the whole file once: a header this flowsync reads, every row whole and in order, each row of flows as the
 * service's own rules allow (row-rules.ts), the counts it says.
 */
async function checkFile(file: string): Promise<ExportHeader> {
  let header: ExportHeader | undefined;
  let number = 0;
  let at = 0;
  const counts = new Map<string, number>();
  for await (const line of linesOf(file)) {
    number++;
    if (header === undefined) {
      header = parseHeader(line, file);
      continue;
    }
    const { table, row: read } = parseRow(line, number, file);
    at = tableAt(table, at, number, file);
    const width = header.tables[table]!.columns.length;
    if (read.length !== width) {
      throw new TransferRefused(
        `${file} is damaged at line ${number.toLocaleString('en')}: a row of ${table} with ${read.length} values, where the table has ${width} columns.`,
      );
    }
    const row = widenRow(TRANSFER_TABLES[at]!, read);
    const refused = refusedRow(table, row);
    if (refused !== null) {
      const { key, columns } = TRANSFER_TABLES[at]!;
      const named = key
        .map((column) => `${column} ${JSON.stringify(row[columns.indexOf(column)])}`)
        .join(', ');
      throw new TransferRefused(
        `${file} is refused at line ${number.toLocaleString('en')}: the row of ${table} with ${named}: ${refused}, which the service refuses. Nothing was imported.`,
      );
    }
    counts.set(table, (counts.get(table) ?? 0) + 1);
  }
  if (header === undefined) return parseHeader(undefined, file);
  for (const table of TRANSFER_TABLES) {
    const expected = header.tables[table.name]!.rows;
    const found = counts.get(table.name) ?? 0;
    if (found !== expected) {
      throw new TransferRefused(
        `${file} is incomplete: it has ${plural(found, 'row')} of ${table.name} where its header counts ${expected.toLocaleString('en')} (was the export cut short?). Nothing was imported.`,
      );
    }
  }
  return header;
}

/** The catalog's index of `table`, at or after `from`: the tables come in the catalog's order, each once. */
function tableAt(table: string, from: number, number: number, file: string): number {
  for (let at = from; at < TRANSFER_TABLES.length; at++) if (TRANSFER_TABLES[at]!.name === table) return at;
  throw new TransferRefused(
    `${file} is damaged at line ${number.toLocaleString('en')}: a row of ${table}, ` +
      (TRANSFER_TABLES.some((known) => known.name === table)
        ? 'after the rows of a table that comes later.'
        : 'a table this format does not have.'),
  );
}

async function refuseUnlessEmpty(sql: Sql, db: ServiceDatabase): Promise<void> {
  const filled: string[] = [];
  for (const table of TRANSFER_TABLES) {
    const rows = await countRows(sql, table.name);
    if (rows > 0) filled.push(`${table.name}: ${plural(rows, 'row')}`);
  }
  if (filled.length === 0) return;
  throw new TransferRefused(
    `${db.location} is not empty (${filled.slice(0, 3).join(', ')}${filled.length > 3 ? ', …' : ''}): ` +
      'import into a new database (a new file, or one made with createdb), which `flowsync service import` fills.',
  );
}

interface Batch {
  table: TransferTable;
  rows: Value[][];
  /** The file's lines the rows are on, for a refusal. */
  from: number;
  to: number;
  bytes: number;
}

async function insertRows(sql: Sql, file: string, header: ExportHeader, progress: ProgressCounter) {
  const rowsOf = (table: TransferTable) => header.tables[table.name]!.rows;
  const done = new Map<string, number>();
  // Every table is told in the catalog's order, those without rows too (0 of 0), so each shows in the progress.
  let next = 0;
  const reach = (table: TransferTable | null) => {
    for (; next < TRANSFER_TABLES.length && TRANSFER_TABLES[next] !== table; next++) {
      const empty = TRANSFER_TABLES[next]!;
      progress.tell(empty.name, 0, rowsOf(empty), 0);
    }
    if (table !== null) {
      next++;
      progress.tell(table.name, 0, rowsOf(table), 0);
    }
  };
  let batch: Batch | null = null;
  const flush = async () => {
    if (batch === null) return;
    const { table, rows } = batch;
    await insertBatch(sql, batch, file);
    const tableDone = (done.get(table.name) ?? 0) + rows.length;
    done.set(table.name, tableDone);
    progress.tell(table.name, tableDone, rowsOf(table), rows.length);
    batch = null;
  };
  let number = 0;
  for await (const line of linesOf(file)) {
    if (++number === 1) continue; // the header, read already
    const { table: name, row } = parseRow(line, number, file);
    if (batch !== null && batch.table.name !== name) await flush();
    if (batch === null) {
      const table: TransferTable = TRANSFER_TABLES.find((known) => known.name === name)!;
      if (!done.has(name)) reach(table);
      batch = { table, rows: [], from: number, to: number, bytes: 0 };
    }
    batch.rows.push(widenRow(batch.table, row));
    batch.to = number;
    batch.bytes += line.length;
    const full =
      batch.rows.length >= BATCH_ROWS ||
      (batch.rows.length + 1) * batch.table.columns.length > BATCH_PARAMETERS ||
      batch.bytes >= BATCH_BYTES;
    if (full) await flush();
  }
  await flush();
  reach(null);
}

async function insertBatch(sql: Sql, { table, rows, from, to }: Batch, file: string): Promise<void> {
  const text = `INSERT INTO ${table.name} (${table.columns.join(', ')}) VALUES ${valueRows(rows.length, table.columns.length)}`;
  try {
    await sql.run(text, rows.flat());
  } catch (error) {
    if (!refusedValue(error)) throw error;
    throw new TransferRefused(
      `${file}, lines ${from.toLocaleString('en')}–${to.toLocaleString('en')} (${table.name}): ` +
        `the database refused a row (${(error as Error).message}). Nothing was imported.`,
    );
  }
}

/**
 * A row the database will not take, whenever it is tried (a duplicate key, text Postgres does not store): the
 * file's fault, said as such. Postgres's classes 22 (data exception) and 23 (integrity constraint), SQLite's
 * constraint and type errors. Not class 40 (failed to serialize), which the transaction runs again.
 */
function refusedValue(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^(22|23)|^SQLITE_(CONSTRAINT|MISMATCH|TOOBIG)/.test(code);
}

/** Each identity sequence past the largest number imported, so that the service's next insert takes a new one. */
async function moveSequences(sql: Sql): Promise<void> {
  for (const { name, identity } of TRANSFER_TABLES) {
    if (identity === undefined) continue;
    await sql.get(
      `SELECT setval(pg_get_serial_sequence('${name}', '${identity}'), coalesce(max(${identity}), 0) + 1, false) FROM ${name}`,
    );
  }
}

async function checkCounts(sql: Sql, header: ExportHeader): Promise<void> {
  for (const table of TRANSFER_TABLES) {
    const expected = header.tables[table.name]!.rows;
    const found = await countRows(sql, table.name);
    if (found !== expected) {
      throw new TransferRefused(
        `After the import, ${table.name} has ${plural(found, 'row')} where the export has ${expected.toLocaleString('en')}. Nothing was imported.`,
      );
    }
  }
}
