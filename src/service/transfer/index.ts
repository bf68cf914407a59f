// `flowsync service export` and `import`: a service's every row, moved between SQLite and Postgres through one file.
export { exportService, type ExportOptions } from './export.ts';
export { importService, type ImportOptions } from './import.ts';
export { EXPORT_FORMAT, EXPORT_VERSION, TransferRefused } from './format.ts';
export type { OnProgress, TransferProgress, TransferSummary } from './progress.ts';
