import Database from 'better-sqlite3';
import { copyFileSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { createServer, type AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { engineOnService, type EngineOnService } from '../support/engine.ts';
import { startFaultProxy } from '../support/fault-proxy.ts';
import { eventually, serviceTree } from '../support/repo.ts';
import { readDatabase } from '../support/service.ts';

/**
 * Issue 24, the agent checks what the service holds (list_flows: each flow's aggregate hash), at start, after a
 * round of `flowsync sync` and after each periodic rescan: a service restored from an older copy of its database,
 * or wiped, is found and reconciled, never left "in sync". Measured before: a wiped database got "509 files, in
 * sync" while it held 0; a restored backup kept 40 files wrong forever.
 */
const FILES = { 'flows/a/x.yml': 'x: 1\n', 'flows/a/y.yml': 'y: 1\n', 'flows/b/z.yml': 'z: 1\n' };
let setup: EngineOnService;

afterEach(async () => {
  await setup?.close();
});

const WRITER = 'ada@laptop:~/app';

/** A port free now, so that the service comes back where the engine's client calls it after a restart. */
function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

describe('the service checked against what this checkout acknowledged', () => {
  it("a service restored from an older copy of its database gets this checkout's later versions again", async () => {
    setup = await engineOnService(FILES, { port: await freePort() });
    const { svc, repo } = setup;
    const stored = () => serviceTree(readDatabase(svc.dbPath), 'acme', 'app');
    const harness = setup.engine({ writer: WRITER });
    await harness.engine.syncOnce();
    // The operator's nightly copy of the database.
    await svc.stop();
    const backup = `${svc.dbPath}.backup`;
    copyFileSync(svc.dbPath, backup);
    await svc.restart();

    repo.write('flows/a/x.yml', 'x: 2\n');
    await harness.engine.syncOnce();
    expect(stored()['flows/a/x.yml']).toBe('x: 2\n');

    // The service is restored from last night's copy: x is back to x: 1 there.
    await svc.stop();
    for (const suffix of ['-wal', '-shm']) rmSync(`${svc.dbPath}${suffix}`, { force: true });
    copyFileSync(backup, svc.dbPath);
    await svc.restart();
    expect(stored()['flows/a/x.yml']).toBe('x: 1\n');

    // Nothing changed here; the check finds it: the service lost the version this checkout synced. What it holds
    // carries this checkout's id, but a copy of this checkout (one id) may have written it after the restore (the
    // team model, issue 45): a conflict marked lost, whose hint (`resolve --mine`) sends the later version again.
    await harness.engine.syncOnce();
    expect(harness.engine.status().counts).toMatchObject({ conflicts: 1 });
    expect(harness.engine.service.wentBackLine()).toMatch(/1 version this checkout synced/);
    expect(stored()['flows/a/x.yml']).toBe('x: 1\n');
    await harness.engine.service.resolve(null, 'mine');
    await harness.engine.syncOnce();
    await eventually(() => expect(stored()['flows/a/x.yml']).toBe('x: 2\n'));
    await eventually(() =>
      expect(harness.engine.status().counts).toMatchObject({ conflicts: 0, pending: 0 }),
    );
  });

  it("taking the service's version of a lost file keeps this checkout's, the only copy, first (issue 45)", async () => {
    setup = await engineOnService(FILES, { port: await freePort() });
    const { svc, repo } = setup;
    const harness = setup.engine({ writer: WRITER });
    await harness.engine.syncOnce();
    await svc.stop();
    const backup = `${svc.dbPath}.backup`;
    copyFileSync(svc.dbPath, backup);
    await svc.restart();
    repo.write('flows/a/x.yml', 'x: 2\n');
    await harness.engine.syncOnce();
    await svc.stop();
    for (const suffix of ['-wal', '-shm']) rmSync(`${svc.dbPath}${suffix}`, { force: true });
    copyFileSync(backup, svc.dbPath);
    await svc.restart();
    await harness.engine.syncOnce();
    expect(harness.engine.service.wentBackLine()).not.toBeNull();
    // x: 2 is on this disk and in no history of the service: "take theirs" keeps it before writing x: 1 over it.
    const { resolved, kept } = await harness.engine.service.resolve(null, 'theirs');
    expect(resolved).toEqual([{ flowPath: 'flows/a', path: 'x.yml' }]);
    expect(kept).toEqual([{ flowPath: 'flows/a', path: 'x.yml', version: expect.any(Number) }]);
    expect(readFileSync(join(repo.root, 'flows/a/x.yml'), 'utf8')).toBe('x: 1\n');
    const copies = readDatabase(svc.dbPath)(
      `SELECT hash FROM file_versions WHERE path = 'x.yml' AND conflict_copy = 1`,
    );
    expect(copies).toHaveLength(1);
  });

  it('a wiped database: every file is a conflict (deleted on the service), and one resolve sends them all', async () => {
    setup = await engineOnService(FILES);
    const { svc } = setup;
    const stored = () => serviceTree(readDatabase(svc.dbPath), 'acme', 'app');
    const harness = setup.engine({ writer: WRITER });
    await harness.engine.syncOnce();
    expect(Object.keys(stored())).toHaveLength(3);

    const db = new Database(svc.dbPath);
    db.exec('DELETE FROM flow_files; DELETE FROM flows;');
    db.close();
    expect(stored()).toEqual({});

    await harness.engine.syncOnce();
    const status = harness.engine.status();
    expect(status.counts).toMatchObject({ conflicts: 3, pending: 0 });
    expect(status.message).toContain('3 files are in conflict');
    expect(harness.state.conflicts(harness.engine.repoId).map((c) => c.serviceHash)).toEqual([
      null,
      null,
      null,
    ]);

    await harness.engine.service.resolve(null, 'mine');
    await harness.engine.syncOnce();
    expect(stored()).toEqual(FILES);
    expect(harness.engine.status().counts).toMatchObject({ conflicts: 0, pending: 0 });
  });

  it('a service that holds what was acknowledged costs one call and records nothing', async () => {
    setup = await engineOnService(FILES);
    const proxy = await startFaultProxy(setup.svc.url);
    const harness = setup.engine({ writer: WRITER, url: proxy.url });
    await harness.engine.syncOnce();
    const before = proxy.requests.length;
    expect(await harness.engine.round.check()).toBe(0);
    expect(proxy.requests.slice(before)).toEqual(['/api/run/svc/flow_def/public/list_flows']);
    expect(harness.engine.status().counts).toMatchObject({ conflicts: 0, pending: 0 });
    await harness.close();
    await proxy.close();
  });
});
