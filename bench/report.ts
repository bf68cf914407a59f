import os from 'node:os';

export interface BenchRow {
  metric: string;
  value: string;
  target: string;
  /** null when the row has no target. */
  met: boolean | null;
}

export function percentile(sortedMs: number[], p: number): number {
  if (sortedMs.length === 0) return Number.NaN;
  const index = Math.min(sortedMs.length - 1, Math.ceil((p / 100) * sortedMs.length) - 1);
  return sortedMs[Math.max(0, index)]!;
}

export function machine(): string {
  const cpu = os.cpus()[0]?.model.trim() ?? 'unknown CPU';
  return `${os.cpus().length} × ${cpu}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, Node ${process.version}, ${os.platform()}`;
}

/** A markdown table, ready to paste into the README or a closing note. */
export function printTable(title: string, rows: BenchRow[]): void {
  const lines = [
    `### ${title}`,
    `machine: ${machine()}`,
    '',
    '| metric | value | target | met |',
    '| --- | --- | --- | --- |',
    ...rows.map(
      (r) => `| ${r.metric} | ${r.value} | ${r.target} | ${r.met === null ? '' : r.met ? 'yes' : 'NO'} |`,
    ),
    '',
  ];
  console.log(lines.join('\n'));
}
