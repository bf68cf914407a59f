import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { engineOnService, type EngineOnService } from '../support/engine.ts';
import { diskTree, eventually, serviceTree } from '../support/repo.ts';

/**
 * Issue 21: during a storm of rewrites to 1,000 files, uploads waited until the writes stopped: the coalescer
 * hands a burst over every 500 ms at the latest, but each burst queued local work ahead of the round, and a round
 * ran only once no local work waited, which a storm never allows. Here the storm goes on until the service
 * holds content written during it, 30 s at most.
 */
let on: EngineOnService | null = null;

afterEach(async () => {
  await on?.close();
  on = null;
});

const FILES = Array.from({ length: 1000 }, (_, i) => `flows/f${i % 10}/file-${i}.yaml`);

describe('a storm of rewrites to 1,000 files', () => {
  it('sends what is written while the storm goes on, not only once it stops', async () => {
    on = await engineOnService(Object.fromEntries(FILES.map((path) => [path, 'pass: 0\n'])));
    const { svc: service, repo: tree } = on;
    const harness = on.engine();
    await harness.engine.start();
    const stored = () => serviceTree(service.read, 'acme', 'app');
    await eventually(() => expect(stored()).toEqual(diskTree(tree.root)), 30_000);

    // Every file rewritten pass after pass by a process of its own (the engine runs in this one, and a writer here
    // would starve its event loop), until the service holds something written during the storm, or for 30 s. The
    // service is looked at every 20 ms meanwhile; the writer stops only after it has been seen, or the time is up.
    const writer = spawn(
      process.execPath,
      [
        '-e',
        `const fs = require('node:fs');
         const files = ${JSON.stringify(FILES.map((path) => join(tree.root, path)))};
         let pass = 0;
         process.on('SIGTERM', () => { process.stdout.write(String(pass)); process.exit(0); });
         const storm = () => { pass++; for (const f of files) fs.writeFileSync(f, 'pass: ' + pass + '\\n'); setImmediate(storm); };
         storm();`,
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    let output = '';
    writer.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exited = new Promise<void>((done) => writer.on('exit', () => done()));
    const stormEnds = Date.now() + 30_000;
    let seenDuringStorm = false;
    while (!seenDuringStorm && Date.now() < stormEnds) {
      seenDuringStorm = Object.values(stored()).some((c) => c !== 'pass: 0\n');
      await sleep(20);
    }
    writer.kill('SIGTERM');
    await exited;
    expect(Number(output)).toBeGreaterThan(1);
    // Sent while the writes went on (on the old code nothing arrived until they stopped, whatever their length).
    expect(seenDuringStorm).toBe(true);
    await eventually(() => expect(stored()).toEqual(diskTree(tree.root)), 30_000);
  }, 90_000);
});
