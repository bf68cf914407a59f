/**
 * Runs the benchmarks and prints their tables. `npm run bench` runs all; `npm run bench -- service` one
 * (service, service-db, service-check, client, sync, cli, peer).
 * Benchmarks are never part of `npm test`: timings on a shared machine are for reading, not asserting.
 */
import { buildCommand } from '../test/support/build.ts';
import { printTable, type BenchRow } from './report.ts';
import { runCliBench } from './cli.ts';
import { PEER_NAME, runPeerBench } from './peer.ts';
import { runClientBench } from './client.ts';
import { runServiceBench } from './service.ts';
import { runServiceCheckBench } from './service-check.ts';
import { runServiceDbBench } from './service-db.ts';
import { runSyncBench } from './sync.ts';
import { runLiveBench } from './live.ts';

const benches: Record<string, { title: string; run: () => Promise<BenchRow[]>; peer?: string }> = {
  service: { title: 'service (bench/service.ts)', run: runServiceBench },
  'service-db': { title: 'service on SQLite and Postgres (bench/service-db.ts)', run: runServiceDbBench },
  'service-check': {
    title: "the agents' check of the service every minute (bench/service-check.ts)",
    run: runServiceCheckBench,
  },
  live: {
    title: "a live team: a teammate's edit seen, and what the held calls cost (bench/live.ts)",
    run: runLiveBench,
  },
  client: { title: 'client (bench/client.ts)', run: runClientBench },
  sync: { title: 'sync (bench/sync.ts)', run: runSyncBench },
  cli: { title: 'cli (bench/cli.ts)', run: runCliBench },
  peer: { title: 'peer: flowsync beside Syncthing (bench/peer.ts)', run: runPeerBench, peer: PEER_NAME },
};

const wanted = process.argv.slice(2);
const unknown = wanted.filter((name) => !(name in benches));
if (unknown.length > 0) {
  console.error(`Unknown bench: ${unknown.join(', ')}. Known: ${Object.keys(benches).join(', ')}`);
  process.exit(2);
}
// The benches run `flowsync` as the package does, from its build (dist/): built here when a source is newer, as
// the tests do. Without it a fresh checkout's bench stopped at "flowsync serve exited with 1".
buildCommand();
for (const name of wanted.length > 0 ? wanted : Object.keys(benches)) {
  const bench = benches[name]!;
  printTable(bench.title, await bench.run(), bench.peer);
}
