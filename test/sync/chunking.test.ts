import { describe, expect, it } from 'vitest';
import { SPEC_CALL_LIMITS, SYNC_CALL_LIMITS } from '../../src/protocol/index.ts';
import { MAX_FILE_BYTES } from '../../src/protocol/index.ts';
import { chunkPlans, listingOverCap } from '../../src/sync/uploader.ts';

type Plans = Parameters<typeof chunkPlans>[0];

/** Flows of `files` files of `size` bytes each, with the shortest paths there are: the most files per byte. */
function plans(flows: number, files: number, size: number): Plans {
  return Array.from({ length: flows }, (_, f) => {
    const records = Array.from({ length: files }, (_, i) => ({
      flowPath: `f/${f}`,
      path: String(i % 10),
      size,
      mtimeMs: 0,
      localHash: 'h',
      warning: null,
      ackedHash: null,
      fileId: null,
    }));
    return {
      flowPath: `f/${f}`,
      upserts: records,
      deletes: [],
      present: records,
      signature: '',
      uncertain: false,
      full: false,
      bases: false,
    };
  });
}

describe("the agent's sync_batch chunks stay under the service's caps per call", () => {
  it.each([
    ['many flows of one empty file', plans(5_000, 1, 0)],
    ['flows of many empty files (the most files per estimated byte)', plans(300, 1_000, 0)],
    ['flows of a few files as large as the agent sends', plans(200, 3, MAX_FILE_BYTES)],
    ['a mix', [...plans(50, 2_000, 10), ...plans(500, 2, 4_000), ...plans(30, 1, MAX_FILE_BYTES)]],
  ])('%s', (_name, all) => {
    for (const full of [true, false]) {
      const batches = chunkPlans(all, full);
      expect(batches.flatMap((batch) => batch.plans)).toHaveLength(all.length);
      for (const batch of batches) {
        const files = batch.plans.flatMap((plan) => (full ? plan.present : plan.upserts));
        const contentBytes = files.reduce((sum, file) => sum + (file.size ?? 0), 0);
        expect(batch.plans.length).toBeLessThanOrEqual(SYNC_CALL_LIMITS.flows);
        expect(files.length).toBeLessThanOrEqual(SYNC_CALL_LIMITS.files);
        expect(contentBytes).toBeLessThanOrEqual(SYNC_CALL_LIMITS.contentBytes);
      }
    }
  });
});

describe("a flow's files stay under the spec platform's 8,192 elements per array (issue 37)", () => {
  it('the changed files of a flow of 20,000 go in parts of at most 8,192, its deletions too', () => {
    const [plan] = plans(1, 20_000, 0);
    const withDeletes = { ...plan!, bases: true, deletes: plan!.upserts.slice(0, 9_000) };
    const batches = chunkPlans([withDeletes], false);
    for (const batch of batches)
      for (const part of batch.plans) {
        expect(part.upserts.length).toBeLessThanOrEqual(SPEC_CALL_LIMITS.arrayElements);
        expect(part.deletes.length).toBeLessThanOrEqual(SPEC_CALL_LIMITS.arrayElements);
      }
    expect(batches.flatMap((batch) => batch.plans.flatMap((part) => part.upserts))).toHaveLength(20_000);
    expect(batches.flatMap((batch) => batch.plans.flatMap((part) => part.deletes))).toHaveLength(9_000);
  });

  it('a full listing of more files than one array holds is named with the reason, not sent', () => {
    const [plan] = plans(1, 8_193, 0);
    expect(listingOverCap(plan!)).toMatch(/8,193 files, over .*8,192/);
    expect(listingOverCap(plans(1, 8_192, 0)[0]!)).toBeNull();
  });
});
