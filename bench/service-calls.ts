/** What the service benches send: batches of 1 KiB flow files, and function calls over keep-alive pools. */
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import type { Pool } from 'undici';

export const FLOWS_PER_BATCH = 10;
/** 1,000 files of 1 KiB a batch, ~1.1 MiB of JSON: within the agent's 4 MiB chunks. */
export const FILES_PER_FLOW = 100;

/** `count` sync_batch flows lists of random 1 KiB files, built before a clock starts (hashing is the agent's work). */
export function fileBatches(count: number) {
  return Array.from({ length: count }, (_, b) =>
    Array.from({ length: FLOWS_PER_BATCH }, (_, f) => ({
      flow_path: `flows/b${b}-f${f}`,
      files: Array.from({ length: FILES_PER_FLOW }, (_, i) => {
        const content = randomBytes(384).toString('base64') + '\n'.repeat(512);
        return { path: `steps/${i}.yaml`, content, hash: createHash('sha256').update(content).digest('hex') };
      }),
    })),
  );
}

/**
 * A caller of the service's functions over these pools, each call to the next pool in turn (one pool: every call
 * to it); a call that is not answered 200 fails the bench with the service's words.
 */
export function functionCaller(pools: readonly Pool[]) {
  let turn = 0;
  return async (path: string, args: Record<string, unknown>, auth: string): Promise<string> => {
    const pool = pools[turn++ % pools.length]!;
    const { statusCode, body } = await pool.request({
      path: `/api/run/${path}`,
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: auth },
      body: JSON.stringify({
        args: { baggage: { trace_id: randomUUID(), traffic_type: 'external' }, ...args },
      }),
    });
    const text = await body.text();
    if (statusCode !== 200) throw new Error(`${path}: HTTP ${statusCode} ${text.slice(0, 200)}`);
    return text;
  };
}
