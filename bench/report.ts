import os from 'node:os';

export interface BenchRow {
  metric: string;
  value: string;
  target: string;
  /** null when the row has no target. */
  met: boolean | null;
  /** The same measure for the reference tool, when the bench compares with one (bench/peer.ts: Syncthing). */
  peer?: string;
}

export function percentile(sortedMs: number[], p: number): number {
  if (sortedMs.length === 0) return Number.NaN;
  const index = Math.min(sortedMs.length - 1, Math.ceil((p / 100) * sortedMs.length) - 1);
  return sortedMs[Math.max(0, index)]!;
}

/**
 * The small-call latency the service benches report: `calls` sent one after another, after `warmup` more that are
 * not counted (connections opened, code compiled), as p50 and p99 in milliseconds.
 */
export async function sequentialLatency(
  call: () => Promise<unknown>,
  calls: number,
  warmup: number,
): Promise<{ p50: number; p99: number }> {
  const samples: number[] = [];
  for (let i = 0; i < calls + warmup; i++) {
    const start = performance.now();
    await call();
    if (i >= warmup) samples.push(performance.now() - start);
  }
  samples.sort((a, b) => a - b);
  return { p50: percentile(samples, 50), p99: percentile(samples, 99) };
}

export function machine(): string {
  const cpu = os.cpus()[0]?.model.trim() ?? 'unknown CPU';
  const load = os.loadavg()[0]!.toFixed(2); // above the core count, timings are suspect: rerun
  return `${os.cpus().length} × ${cpu}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, Node ${process.version}, ${os.platform()}, load ${load} when printed`;
}

/**
 * A markdown table, ready to paste into the README or a closing note; with a column for the reference tool when
 * `peerName` is given.
 */
export function printTable(title: string, rows: BenchRow[], peerName?: string): void {
  const peer = (r: BenchRow) => (peerName ? ` ${r.peer ?? ''} |` : '');
  const lines = [
    // The Node in the heading too: a table pasted alone still says which runtime it measured (CI moved 20 → 24).
    `### ${title}, Node ${process.version}`,
    `machine: ${machine()}`,
    '',
    `| metric | value |${peerName ? ` ${peerName} |` : ''} target | met |`,
    `| --- | --- |${peerName ? ' --- |' : ''} --- | --- |`,
    ...rows.map(
      (r) =>
        `| ${r.metric} | ${r.value} |${peer(r)} ${r.target} | ${r.met === null ? '' : r.met ? 'yes' : 'NO'} |`,
    ),
    '',
  ];
  console.log(lines.join('\n'));
}
