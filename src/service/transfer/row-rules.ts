import { unsafePathReason } from '../../protocol/index.ts';
import { sha256Hex } from '../hash.ts';
import { TRANSFER_TABLES } from './catalog.ts';
import type { Value } from './format.ts';

/**
 * The service's own rules for what it stores of flows, applied to an export's rows before an import writes any: a
 * row the service would have refused in `sync_batch` (a path with `..`, absolute, with `\`, NUL, a control
 * character or an empty segment; a hash that is not the SHA-256 of the content) must not enter it by a file either
 * (a crafted export put `flows/a/../../../.bashrc` in a team's database, and every agent that took the
 * service's copy wrote it outside its repository). Returns why a row is refused, or null.
 */
export function refusedRow(table: string, row: readonly Value[]): string | null {
  const rules = RULES[table];
  if (rules === undefined) return null;
  const value = columnsOf(table, row);
  for (const column of rules.paths) {
    const reason = pathReason(value(column));
    if (reason !== null) return `its ${column} ${reason}`;
  }
  return rules.hash === undefined ? null : hashReason(value(rules.hash.hash), value(rules.hash.content));
}

const RULES: Record<string, { paths: string[]; hash?: { hash: string; content: string } }> = {
  flows: { paths: ['flow_path'] },
  flow_files: { paths: ['path'], hash: { hash: 'hash', content: 'content' } },
  file_versions: { paths: ['flow_path', 'path'], hash: { hash: 'hash', content: 'content' } },
  history_purges: { paths: ['flow_path', 'path'] },
};

function columnsOf(table: string, row: readonly Value[]): (column: string) => Value {
  const columns = TRANSFER_TABLES.find((known) => known.name === table)!.columns;
  return (column) => row[columns.indexOf(column)] ?? null;
}

/** The path quoted as JSON, so that a NUL, a control character or a line break in it stays on one line. */
function pathReason(path: Value): string | null {
  if (typeof path !== 'string') return `is ${path === null ? 'missing' : 'not text'}`;
  const reason = unsafePathReason(path);
  return reason === null ? null : `${JSON.stringify(path.slice(0, 200))} ${reason}`;
}

/**
 * A hash is the lower-case hex SHA-256 of the content. A version without content is a deletion (no hash) or one
 * kept from before history held contents (db/migrations.ts, 2): its hash cannot be checked, only its form.
 */
function hashReason(hash: Value, content: Value): string | null {
  if (hash === null) return content === null ? null : 'is a deletion (no hash) that carries content';
  if (typeof hash !== 'string' || !/^[0-9a-f]{64}$/.test(hash)) return 'has a hash that is not a hex SHA-256';
  if (content === null) return null;
  if (typeof content !== 'string') return 'has content that is not text';
  return sha256Hex(content) === hash ? null : 'has a hash that is not the SHA-256 of its content';
}
