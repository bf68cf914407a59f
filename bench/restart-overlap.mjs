// Would a restart get under 2 s with the scan in a child process on the idle core? (issue 50; docs/performance.md)
// The scan has to follow each folder's watch, so that a change between the two is not lost: here chokidar watches a
// repository's flows ten folders at a time, as src/sync/watcher.ts does, and after each group is ready either
//   in turns: nothing more until every group is watched, then the same scan in this process (what a restart does);
//   child:    a child process is told the group and scans it at once, while chokidar goes on with the next.
// The scan is the bare minimum of the agent's: list the folder, lstat each file, compare it with the state's row of
// it (one query per flow). No ignore rules, no containment, no objects for the engine: the agent's own scan does more
// per file, so this is the most a child could take off. Prints a table: medians of the runs, wall time from the
// start of chokidar's first group to the last file compared.
//
//   node bench/restart-overlap.mjs <repository> <state.db> [runs]
// with the repository and the state of a synced bench set-up (bench/peer.ts's tree of 100,000 files, its agent's
// state.db, the agent stopped); the state's repository is its first.
import { fork } from 'node:child_process';
import { lstatSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';

const require = createRequire(import.meta.url);

/** The bare scan of some flows (folders of `root`, relative to it, `flows/x`): files seen and files unchanged. */
function scanner(root, statePath) {
  const Database = require('better-sqlite3');
  const db = new Database(statePath, { readonly: true });
  const ofFlow = db.prepare(
    'SELECT path, size, mtime_ms AS mtimeMs, ctime_ms AS ctimeMs, ino FROM files WHERE repo_id = 1 AND flow_path = ?',
  );
  const counts = { seen: 0, unchanged: 0 };
  const scan = (flow) => {
    const known = new Map();
    for (const row of ofFlow.all(flow)) known.set(row.path, row);
    const pending = [''];
    while (pending.length > 0) {
      const folder = pending.pop();
      for (const entry of readdirSync(join(root, flow, folder), { withFileTypes: true })) {
        const path = folder === '' ? entry.name : `${folder}/${entry.name}`;
        if (entry.isDirectory()) pending.push(path);
        else if (entry.isFile()) {
          const stat = lstatSync(join(root, flow, path));
          const row = known.get(path);
          counts.seen++;
          if (row && row.size === stat.size && row.mtimeMs === stat.mtimeMs && row.ino === stat.ino)
            counts.unchanged++;
        }
      }
    }
  };
  return { scan, counts };
}

if (process.argv[2] === '--child') {
  const { scan, counts } = scanner(process.argv[3], process.argv[4]);
  process.on('message', (message) => {
    if (message === 'end') {
      process.send(counts);
      process.disconnect();
    } else for (const flow of message) scan(flow);
  });
  process.send('ready');
} else {
  const [root, statePath, runs = '5'] = process.argv.slice(2);
  if (!root || !statePath) {
    console.error('usage: node bench/restart-overlap.mjs <repository> <state.db> [runs]');
    process.exit(2);
  }
  const { watch } = await import('chokidar');
  const flows = readdirSync(join(root, 'flows'))
    .sort()
    .map((name) => `flows/${name}`);

  /** chokidar on the flows ten at a time, folders only (watcher.ts), `ready` called after each group. */
  async function watchAll(ready) {
    const watchers = [];
    for (let start = 0; start < flows.length; start += 10) {
      const group = flows.slice(start, start + 10);
      const watcher = watch(
        group.map((flow) => join(root, flow)),
        {
          ignoreInitial: true,
          followSymlinks: false,
          ignored: (_path, stats) => stats !== undefined && !stats.isDirectory(),
        },
      );
      // As watcher.ts's listFoldersOnly: chokidar's listing asked for folders alone (its files arrive as raw events).
      const listing = watcher._readdirp;
      watcher._readdirp = function (path, options) {
        const { directoryFilter } = options;
        return listing.call(this, path, {
          ...options,
          type: 'directories',
          alwaysStat: false,
          fileFilter: () => false,
          directoryFilter: (entry) => {
            entry.stats = entry.dirent;
            return directoryFilter ? directoryFilter(entry) : true;
          },
        });
      };
      watchers.push(watcher);
      await new Promise((resolve) => watcher.once('ready', resolve));
      ready(group);
    }
    return watchers;
  }

  async function inTurns() {
    const { scan, counts } = scanner(root, statePath); // the agent's state is open before it watches
    const started = performance.now();
    const watchers = await watchAll(() => {});
    const watched = performance.now() - started;
    for (const flow of flows) scan(flow);
    const done = performance.now() - started;
    await Promise.all(watchers.map((watcher) => watcher.close()));
    return { watched, done, counts };
  }

  async function withChild() {
    const child = fork(import.meta.filename, ['--child', root, statePath]);
    const started = performance.now();
    const answers = [];
    let answered = () => {};
    child.on('message', (message) => {
      answers.push(message);
      answered();
    });
    const next = () =>
      answers.length > 0
        ? Promise.resolve(answers.shift())
        : new Promise((r) => (answered = r)).then(() => answers.shift());
    await next(); // ready: started while the state was opened, as it would be at an agent's start
    const watchers = await watchAll((group) => child.send(group));
    const watched = performance.now() - started;
    child.send('end');
    const counts = await next();
    const done = performance.now() - started;
    await Promise.all(watchers.map((watcher) => watcher.close()));
    return { watched, done, counts };
  }

  const median = (values) => values.sort((a, b) => a - b)[Math.floor(values.length / 2)];
  const results = { 'in turns': [], 'scan in a child': [] };
  for (let run = 0; run < Number(runs); run++) {
    results['in turns'].push(await inTurns());
    results['scan in a child'].push(await withChild());
  }
  const [load] = (await import('node:os')).loadavg();
  console.log(
    `Node ${process.version}, load ${load.toFixed(2)}, ${flows.length} flows, medians of ${runs} runs in turns`,
  );
  console.log('| how | chokidar ready (ms) | last file compared (ms) | files seen / unchanged |');
  console.log('| --- | --- | --- | --- |');
  for (const [how, list] of Object.entries(results)) {
    const { counts } = list.at(-1);
    console.log(
      `| ${how} | ${median(list.map((r) => r.watched)).toFixed(0)} | ${median(list.map((r) => r.done)).toFixed(0)} (${list.map((r) => r.done.toFixed(0)).join(', ')}) | ${counts.seen} / ${counts.unchanged} |`,
    );
  }
}
