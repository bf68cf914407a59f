import { afterEach, describe, expect, it } from 'vitest';
import { SYNC_CALL_LIMITS } from '../../src/protocol/index.ts';
import { engineOnService, type EngineOnService } from '../support/engine.ts';

let on: EngineOnService | null = null;

afterEach(async () => {
  await on?.close();
  on = null;
});

describe("a repository larger than one call of the service's caps", () => {
  it('syncs 10,000 flows completely, in calls the service accepts', async () => {
    const flows = 10_000;
    expect(flows).toBeGreaterThan(SYNC_CALL_LIMITS.flows);
    on = await engineOnService();
    const { svc, repo } = on;
    for (let i = 0; i < flows; i++) repo.write(`flows/f${i}/main.yaml`, `${i}\n`);
    const harness = on.engine();
    await harness.engine.start();

    expect(harness.engine.status().counts).toMatchObject({ flows, files: flows, pending: 0 });
    const [row] = svc.read<{ n: number }>(
      `SELECT count(*) AS n FROM flow_files ff JOIN flows f ON f.id = ff.flow_id
       JOIN repos r ON r.id = f.repo_id WHERE r.owner = 'acme' AND r.name = 'app'`,
    );
    expect(row!.n).toBe(flows);
    expect(svc.logs.filter((line) => line.includes('"status":413'))).toEqual([]);
  });
});
