import { closeSync, existsSync, fsyncSync, linkSync, renameSync, unlinkSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import {
  openPrivateExclusive,
  storageFaultLine,
  storageFaultOf,
  temporaryNameFor,
} from '../../host/index.ts';
import type { Sql } from '../db/open.ts';
import { countRows, TRANSFER_TABLES, type TransferTable } from './catalog.ts';
import { openTransferDatabase } from './database.ts';
import { headerLine, rowLine, TransferRefused, type Value } from './format.ts';
import { ProgressCounter, type OnProgress, type TransferSummary } from './progress.ts';

/**
 * Rows read at once. A flow file is at most a few MiB (a sync call carries 6 MiB of content in all), so a page
 * stays small in memory whatever the table.
 */
const PAGE_ROWS = 200;

export interface ExportOptions {
  /** The service's database: a SQLite file or a Postgres URL. */
  db: string;
  /** The file to write; it must not exist unless `force`. */
  out: string;
  force?: boolean;
  onProgress?: OnProgress;
}

/**
 * Writes every row of the service's database to `out` (format.ts), read in one snapshot: a `flowsync serve` on the
 * same database may go on writing, and the file holds the database as it was at one moment. The file is written
 * under a temporary name (0600: it holds token digests and every flow's content) and given its name when whole,
 * so a failed export leaves nothing behind.
 */
export async function exportService(options: ExportOptions): Promise<TransferSummary> {
  const { out } = options;
  if (!options.force && existsSync(out)) {
    throw new TransferRefused(`${out} exists: choose another --out, or add --force to replace it.`);
  }
  const db = await openTransferDatabase(options.db, 'export');
  try {
    const temporary = temporaryNameFor(out);
    const fd = writing(out, () => openPrivateExclusive(temporary));
    // Closed once: a second close could close a descriptor the number was given to meanwhile (a connection's).
    let open = true;
    const close = () => {
      if (open) closeSync(fd);
      open = false;
    };
    let kept = false;
    try {
      const rows = await db.snapshot(async (sql) => {
        const counts = new Map<string, number>();
        for (const table of TRANSFER_TABLES) counts.set(table.name, await countRows(sql, table.name));
        const total = [...counts.values()].reduce((sum, n) => sum + n, 0);
        const progress = new ProgressCounter(total, options.onProgress);
        writing(out, () => writeAll(fd, headerLine(db.dialect, counts)));
        for (const table of TRANSFER_TABLES) {
          const expected = counts.get(table.name)!;
          let done = 0;
          progress.tell(table.name, 0, expected, 0);
          for await (const page of pagesOf(sql, table)) {
            writing(out, () => writeAll(fd, page.map((row) => rowLine(table, row)).join('')));
            done += page.length;
            progress.tell(table.name, done, expected, page.length);
          }
          // One snapshot: the rows read are the rows counted. Anything else is a bug, and no file is better.
          if (done !== expected) throw new Error(`${table.name}: read ${done} rows, counted ${expected}`);
        }
        return total;
      });
      writing(out, () => fsyncSync(fd));
      close();
      place(temporary, out, options.force ?? false);
      kept = true;
      return { tables: TRANSFER_TABLES.length, rows, database: db.location };
    } finally {
      if (!kept) {
        close();
        unlinkSync(temporary);
      }
    }
  } finally {
    await db.close();
  }
}

/**
 * The table's rows in key order, a page at a time. Postgres: a cursor in the snapshot's transaction, the text keys
 * ordered byte by byte (`COLLATE "C"`, as SQLite orders them) whatever the database's locale. SQLite: pages after
 * the last key read, each an indexed range (it has no cursor across statements, and needs none).
 */
async function* pagesOf(sql: Sql, table: TransferTable): AsyncGenerator<Value[][]> {
  const columns = table.columns.join(', ');
  const toValues = (row: Record<string, unknown>) =>
    table.columns.map((column) => valueOf(table, column, row));
  if (sql.dialect === 'postgres') {
    const order = table.key.map((column) => (table.numericKey ? column : `${column} COLLATE "C"`)).join(', ');
    await sql.run(
      `DECLARE flowsync_export NO SCROLL CURSOR FOR SELECT ${columns} FROM ${table.name} ORDER BY ${order}`,
    );
    for (;;) {
      const rows = await sql.all<Record<string, unknown>>(`FETCH FORWARD ${PAGE_ROWS} FROM flowsync_export`);
      if (rows.length === 0) break;
      yield rows.map(toValues);
    }
    await sql.run('CLOSE flowsync_export');
    return;
  }
  const order = table.key.join(', ');
  const after =
    table.key.length === 1 ? `${table.key[0]} > ?` : `(${order}) > (${table.key.map(() => '?').join(', ')})`;
  let last: unknown[] | null = null;
  for (;;) {
    const rows: Record<string, unknown>[] = await sql.all<Record<string, unknown>>(
      `SELECT ${columns} FROM ${table.name} ${last ? `WHERE ${after}` : ''} ORDER BY ${order} LIMIT ${PAGE_ROWS}`,
      last ?? undefined,
    );
    if (rows.length === 0) return;
    yield rows.map(toValues);
    const end = rows[rows.length - 1]!;
    last = table.key.map((column) => end[column]);
  }
}

/** A column's value as the file carries it: text, a number or null; anything else is refused by name. */
function valueOf(table: TransferTable, column: string, row: Record<string, unknown>): Value {
  const value = row[column];
  if (value === null || typeof value === 'string' || (typeof value === 'number' && Number.isFinite(value)))
    return value;
  throw new TransferRefused(
    `Table ${table.name}, column ${column} holds a value an export cannot carry (${value === undefined ? 'none' : typeof value}): the database was changed outside flowsync.`,
  );
}

function writeAll(fd: number, text: string): void {
  const bytes = Buffer.from(text, 'utf8');
  for (let done = 0; done < bytes.length;) done += writeSync(fd, bytes, done, bytes.length - done);
}

/** A write to the export file, its failure said as what to do (a full disk, a folder not there). */
function writing<T>(out: string, write: () => T): T {
  try {
    return write();
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT')
      throw new TransferRefused(
        `The folder ${dirname(out)} does not exist: create it, or choose another --out.`,
      );
    const fault = storageFaultOf(error);
    if (fault !== null)
      throw new TransferRefused(`Could not write ${out}: ${storageFaultLine(fault, dirname(out))}`);
    throw error;
  }
}

/**
 * The whole file takes its name: replacing what is there with --force (a rename), else only where nothing is yet
 * (a link, which fails rather than replace a file made at that name during the export).
 */
function place(temporary: string, out: string, force: boolean): void {
  if (force) {
    renameSync(temporary, out);
    return;
  }
  try {
    linkSync(temporary, out);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST')
      throw new TransferRefused(`${out} exists: choose another --out, or add --force to replace it.`);
    throw error;
  }
  unlinkSync(temporary);
}
