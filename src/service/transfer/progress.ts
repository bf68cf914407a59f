/** How far an export or an import is, told after every page of rows and once more when a table is done. */
export interface TransferProgress {
  table: string;
  /** Rows of this table done, of its `tableRows`. */
  tableDone: number;
  tableRows: number;
  /** Rows of every table done, of `total`. */
  done: number;
  total: number;
}

export type OnProgress = (progress: TransferProgress) => void;

/** What was moved: the database is named without its password. */
export interface TransferSummary {
  tables: number;
  rows: number;
  database: string;
}

/** Counts rows as they go and tells `onProgress`. */
export class ProgressCounter {
  private done = 0;

  constructor(
    private readonly total: number,
    private readonly onProgress: OnProgress | undefined,
  ) {}

  /** `added` more rows of `table` are done (0 to announce a table). */
  tell(table: string, tableDone: number, tableRows: number, added: number): void {
    this.done += added;
    this.onProgress?.({ table, tableDone, tableRows, done: this.done, total: this.total });
  }
}
