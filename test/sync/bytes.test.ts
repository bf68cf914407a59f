import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startEngine, type EngineHarness } from '../support/engine.ts';
import { eventually, makeRepo, type TestRepo } from '../support/repo.ts';
import { startTestService, type TestService } from '../support/service.ts';

/** Bytes are the truth: what the service stores is exactly the bytes on disk, whatever an editor put there. */
let svc: TestService;
let repo: TestRepo;
let harness: EngineHarness | null = null;

beforeEach(async () => {
  svc = await startTestService();
});
afterEach(async () => {
  await harness?.close();
  harness = null;
  repo.cleanup();
  await svc.close();
});

const BOM = Buffer.from([0xef, 0xbb, 0xbf]);

/** The service's files of acme/app as their stored bytes and hash, read from its database. */
function storedBytes(): Record<string, { bytes: Buffer; hash: string }> {
  const rows = svc.read<{ path: string; bytes: Buffer; hash: string }>(
    `SELECT f.flow_path || '/' || ff.path AS path, CAST(ff.content AS BLOB) AS bytes, ff.hash FROM flow_files ff
     JOIN flows f ON f.id = ff.flow_id JOIN repos r ON r.id = f.repo_id
     WHERE r.owner = 'acme' AND r.name = 'app' ORDER BY 1`,
  );
  return Object.fromEntries(rows.map((row) => [row.path, { bytes: Buffer.from(row.bytes), hash: row.hash }]));
}

function expectSameBytes(paths: string[]) {
  const stored = storedBytes();
  expect(Object.keys(stored).sort()).toEqual([...paths].sort());
  for (const path of paths) {
    const disk = readFileSync(join(repo.root, path));
    expect(stored[path]!.bytes.equals(disk), `${path} byte for byte`).toBe(true);
    expect(stored[path]!.hash).toBe(createHash('sha256').update(disk).digest('hex'));
  }
}

describe('what an editor on Windows writes', () => {
  it('sends a UTF-8 file with a byte-order mark and CRLF files byte for byte, the BOM kept', async () => {
    const files = {
      'flows/win/bom.yaml': Buffer.concat([BOM, Buffer.from('steps: [greet]\r\n')]),
      'flows/win/only-bom.txt': BOM,
      'flows/win/crlf.yaml': 'a: 1\r\nb: 2\r\n',
      'flows/win/mixed.txt': 'one\r\ntwo\nthree\r',
      'flows/win/plain.yaml': 'plain\n',
    };
    repo = makeRepo(files);
    harness = startEngine(repo, svc.url, svc.tokens.user);
    const { engine, state } = harness;
    await engine.start();
    expect(state.rejections(engine.repoId)).toEqual([]);
    expect(engine.status().counts).toMatchObject({ pending: 0, warnings: 0 });
    expectSameBytes(Object.keys(files));

    // Edited while watching: one changed file whose id is known goes through update_file, also byte for byte.
    repo.write('flows/win/bom.yaml', Buffer.concat([BOM, Buffer.from('steps: [greet, wave]\r\n')]));
    await eventually(() => expect(storedBytes()['flows/win/bom.yaml']?.bytes.length).toBe(25));
    expectSameBytes(Object.keys(files));
    // The service holds it a moment before the agent has read the answer and recorded it.
    await eventually(() => expect(engine.status().counts.pending).toBe(0));
  });
});
