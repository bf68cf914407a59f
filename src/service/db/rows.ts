/**
 * Many rows in few statements. A batch of 1,000 files written one statement at a time is 3,000 round trips to
 * Postgres (about 900 files/s on the loaded two cores); in statements of many rows it is a few dozen. Chunks are
 * of 128, 64, … 1 rows, so that a statement's text (and SQLite's prepared statement for it) is one of eight per
 * kind, whatever the count, and its parameters stay far below either database's limit. A chunk's values are
 * gathered with `push`, a row at a time: `flatMap` took 75 µs for 128 rows of 8 values against 2.4 µs, 3% of
 * SQLite's ingest.
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

/**
 * A statement's text for a chunk of `count` rows, made once per count and kept. The same string every time: the
 * prepared-statement cache (sqlite.ts) then finds it at once, where building the text of 128 rows and hashing it
 * for the cache again cost 12 µs a statement, 3% of SQLite's ingest (bench/service.ts). Texts come in eight sizes
 * (`chunks`), so eight are kept.
 */
export function textPerCount(build: (count: number) => string): (count: number) => string {
  const made = new Map<number, string>();
  return (count) => {
    let text = made.get(count);
    if (text === undefined) made.set(count, (text = build(count)));
    return text;
  };
}
