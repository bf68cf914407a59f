/**
 * Many rows in few statements. A batch of 1,000 files written one statement at a time is 3,000 round trips to
 * Postgres (about 900 files/s on the loaded two cores); in statements of many rows it is a few dozen. Chunks are
 * of 128, 64, … 1 rows, so that a statement's text (and SQLite's prepared statement for it) is one of eight per
 * kind, whatever the count, and its parameters stay far below either database's limit.
 */
export function* chunks<T>(rows: readonly T[]): Generator<T[]> {
  let at = 0;
  for (let size = 128; size >= 1; size /= 2) {
    while (rows.length - at >= size) {
      yield rows.slice(at, at + size);
      at += size;
    }
  }
}

/** `(?, ?, ?), (?, ?, ?)`: `count` rows of `columns` parameters each. */
export function valueRows(count: number, columns: number): string {
  const row = `(${Array.from({ length: columns }, () => '?').join(', ')})`;
  return Array.from({ length: count }, () => row).join(', ');
}

/** `?, ?, ?`: a list of `count` parameters, for `IN (…)`. */
export function parameterList(count: number): string {
  return Array.from({ length: count }, () => '?').join(', ');
}
