import { z } from 'zod';
import type { Dialect } from '../db/open.ts';
import { TRANSFER_TABLES, type TransferTable } from './catalog.ts';

/**
 * The export file: JSON lines. The first is the header (the format's name and version, the database it came from,
 * each table's columns and row count); then one line per row, `{"table":…,"row":[…]}`, the values in the order
 * of the header's columns, the tables in the catalog's order. One row a line lets an import read a file of any
 * size a line at a time, and a person read it with `head` and `jq`.
 */
export const EXPORT_FORMAT = 'flowsync-service-export';
/** Raised when a column or table is added (and the catalog with it); an import reads this version and older. */
export const EXPORT_VERSION = 3;

/**
 * What each format added to the one before: whole tables, or columns at the end of a table's list. A file of an
 * older format has none of them; its rows are read as if those columns were null (the members: format 2).
 */
const ADDED: Record<number, Record<string, readonly string[] | 'table'>> = {
  2: {
    members: 'table',
    member_tokens: 'table',
    invites: 'table',
    audit_events: 'table',
    repo_configs: ['written_by', 'member_id'],
    file_versions: ['member_id', 'token_id'],
    history_purges: ['member_id'],
  },
  // A renewed token names the token it replaces; the one renewed, when (its overlap with the new one ends a day after).
  3: { member_tokens: ['renewed_from', 'renewed_at'] },
};

/** A table's columns in a file of `version` (null: that format has no such table). */
export function columnsInFormat(table: TransferTable, version: number): readonly string[] | null {
  let columns = table.columns;
  for (let later = EXPORT_VERSION; later > version; later--) {
    const added = ADDED[later]?.[table.name];
    if (added === 'table') return null;
    if (added) columns = columns.filter((column) => !added.includes(column));
  }
  return columns;
}

/** A row as the catalog has it: a row of an older format gets null for the columns added since. */
export function widenRow(table: TransferTable, row: Value[]): Value[] {
  return row.length < table.columns.length
    ? [...row, ...Array<Value>(table.columns.length - row.length).fill(null)]
    : row;
}

/** A refusal a person can act on (a file that is not an export, a database that is not empty): said in one line. */
export class TransferRefused extends Error {
  override readonly name = 'TransferRefused';
}

export type Value = string | number | null;

export interface ExportHeader {
  format: typeof EXPORT_FORMAT;
  version: number;
  dialect: Dialect;
  tables: Record<string, { columns: readonly string[]; rows: number }>;
}

export function headerLine(dialect: Dialect, rows: ReadonlyMap<string, number>): string {
  const tables = Object.fromEntries(
    TRANSFER_TABLES.map((table) => [table.name, { columns: table.columns, rows: rows.get(table.name) ?? 0 }]),
  );
  const header: ExportHeader = { format: EXPORT_FORMAT, version: EXPORT_VERSION, dialect, tables };
  return `${JSON.stringify(header)}\n`;
}

export function rowLine(table: TransferTable, values: readonly Value[]): string {
  return `${JSON.stringify({ table: table.name, row: values })}\n`;
}

const headerSchema = z.strictObject({
  format: z.literal(EXPORT_FORMAT),
  version: z.int().min(1).max(EXPORT_VERSION),
  dialect: z.enum(['sqlite', 'postgres']),
  tables: z.record(
    z.string(),
    z.strictObject({ columns: z.array(z.string()), rows: z.number().int().nonnegative() }),
  ),
});

/** The header of `file`, checked against the tables this flowsync knows; refused in a line that says why. */
export function parseHeader(line: string | undefined, file: string): ExportHeader {
  const notAnExport = new TransferRefused(
    `${file} is not a flowsync service export (its first line is not the header \`flowsync service export\` writes).`,
  );
  const parsed = parseJson(line ?? '');
  if (
    typeof parsed !== 'object' ||
    parsed === null ||
    (parsed as { format?: unknown }).format !== EXPORT_FORMAT
  )
    throw notAnExport;
  const version = (parsed as { version?: unknown }).version;
  if (typeof version === 'number' && version > EXPORT_VERSION) {
    throw new TransferRefused(
      `${file} was written by a newer flowsync (export format ${version}; this one reads ${EXPORT_VERSION}): ` +
        'import it with that flowsync, or upgrade this one.',
    );
  }
  const header = headerSchema.safeParse(parsed);
  if (!header.success) throw notAnExport;
  const names = Object.keys(header.data.tables);
  const { version: format, tables } = header.data;
  let known = 0;
  for (const table of TRANSFER_TABLES) {
    const expected = columnsInFormat(table, format);
    const columns = tables[table.name]?.columns;
    if (expected === null) {
      // A table this file's format did not have yet: none of its rows.
      if (columns !== undefined)
        throw new TransferRefused(
          `${file} is damaged: its header names a table format ${format} does not have (${table.name}).`,
        );
      tables[table.name] = { columns: [], rows: 0 };
      continue;
    }
    known++;
    if (columns === undefined || columns.join() !== expected.join()) {
      throw new TransferRefused(
        `${file} is damaged: its header does not list the columns of table ${table.name} as format ${format} has them.`,
      );
    }
  }
  if (names.length !== known) {
    const unknown = names.find((name) => !TRANSFER_TABLES.some((table) => table.name === name));
    throw new TransferRefused(
      `${file} is damaged: its header names a table this format does not have (${unknown}).`,
    );
  }
  return header.data;
}

/** One row line of `file` (line `number`, counted from 1), its values checked to be what a column holds. */
export function parseRow(line: string, number: number, file: string): { table: string; row: Value[] } {
  const parsed = parseJson(line) as { table?: unknown; row?: unknown } | undefined;
  const valid =
    typeof parsed === 'object' &&
    parsed !== null &&
    typeof parsed.table === 'string' &&
    Array.isArray(parsed.row) &&
    parsed.row.every(
      (value) =>
        value === null || typeof value === 'string' || (typeof value === 'number' && Number.isFinite(value)),
    ) &&
    Object.keys(parsed).length === 2;
  if (!valid) {
    throw new TransferRefused(
      `${file} is damaged at line ${number.toLocaleString('en')}: not a row as \`flowsync service export\` writes it (was the file cut short or edited?).`,
    );
  }
  return { table: parsed.table as string, row: parsed.row as Value[] };
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
