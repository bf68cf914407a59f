import { CallRefused } from '../errors.ts';

/**
 * Page cursors are opaque to callers: the row's sequence number, tagged with what it pages over so that a cursor
 * from one list is refused by another instead of silently skipping rows.
 */
export function encodeCursor(list: string, seq: number): string {
  return Buffer.from(`${list}:${seq}`, 'utf8').toString('base64url');
}

export function decodeCursor(list: string, cursor: string): number {
  const text = Buffer.from(cursor, 'base64url').toString('utf8');
  const match = /^([a-z]+):(\d{1,15})$/.exec(text);
  if (!match || match[1] !== list) {
    throw new CallRefused(
      'The cursor in pagination.after is not one this list gave out; start again without it.',
      {
        field: 'pagination.after',
      },
    );
  }
  return Number(match[2]);
}

/** Keyset paging: fetch one row more than asked to know whether another page follows. */
export function toPage<Row extends { seq: number }, Node>(
  list: string,
  rows: Row[],
  first: number,
  toNode: (row: Row) => Node,
): { nodes: Node[]; pageInfo: { hasNextPage: boolean; endCursor: string | null } } {
  const hasNextPage = rows.length > first;
  const pageRows = hasNextPage ? rows.slice(0, first) : rows;
  const last = pageRows.at(-1);
  return {
    nodes: pageRows.map(toNode),
    pageInfo: { hasNextPage, endCursor: last ? encodeCursor(list, last.seq) : null },
  };
}
