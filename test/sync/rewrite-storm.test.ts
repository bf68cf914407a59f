import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { engineOnService, type EngineOnService } from '../support/engine.ts';
import { diskTree, eventually, serviceTree } from '../support/repo.ts';

/**
 * Issue 21: during a storm of rewrites to 1,000 files, uploads waited until the writes stopped: the coalescer
 * hands a burst over every 500 ms at the latest, but each burst queued local work ahead of the round, and a round
 * ran only once no local work waited, which a storm never allows. Here the storm lasts 6 s; the service must
 * hold content written during it well before it ends.
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

    // Every file rewritten pass after pass for 6 s by a process of its own (the engine runs in this one, and a
    // writer here would starve its event loop), the service looked at every 20 ms meanwhile.
    const writer = spawn(
      process.execPath,
      [
        '-e',
        `const fs = require('node:fs');
         const files = ${JSON.stringify(FILES.map((path) => join(tree.root, path)))};
         const ends = Date.now() + 6000;
         let pass = 0;
         while (Date.now() < ends) { pass++; for (const f of files) fs.writeFileSync(f, 'pass: ' + pass + '\\n'); }
         process.stdout.write(String(pass));`,
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    let output = '';
    writer.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    let writing = true;
    const exited = new Promise<void>((done) => writer.on('exit', () => ((writing = false), done())));
    const started = Date.now();
    let firstSeenDuringStorm: number | null = null;
    while (writing) {
      if (firstSeenDuringStorm === null && Object.values(stored()).some((c) => c !== 'pass: 0\n')) {
        firstSeenDuringStorm = Date.now() - started;
      }
      await sleep(20);
    }
    await exited;
    const pass = Number(output);
    expect(pass).toBeGreaterThan(3);
    // Sent during the storm, not after it (no timing asserted beyond "before the writes stopped").
    expect(firstSeenDuringStorm).not.toBeNull();
    await eventually(() => expect(stored()).toEqual(diskTree(tree.root)), 30_000);
  }, 90_000);
});
