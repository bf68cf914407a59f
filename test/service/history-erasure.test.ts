import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuditValue } from '../../src/protocol/index.ts';
import { memberToken } from '../support/members.ts';
import { callFunction, startTestService, type TestService } from '../support/service.ts';

/**
 * History cannot be erased by a writer (issue 48). Measured before: with the cap scaled to 1 MiB, two `keep_copy`
 * calls of 600 KiB took flows/deploy/prod.yml from 8 versions to 1 (the copies, each rank 1 of its own path, were
 * never removed by the cap, which took every other file's past instead). Now a copy is bounded, each member's
 * copies stay within a quarter of the cap, the cap takes copies first, and its cut names whose writes filled it.
 */
let svc: TestService;
let alice: string;
let bob: string;
const KIB = 1024;
const REPO = { repo_owner: 'acme', repo_name: 'app' };
const sha = (text: string) => createHash('sha256').update(text).digest('hex');

beforeAll(async () => {
  svc = await startTestService({ retention: { days: 30, bytes: 1024 * KIB } });
  alice = await memberToken(svc.url, `Admin ${svc.sharedTokens.admin}`, 'alice', 'write');
  bob = await memberToken(svc.url, `Admin ${svc.sharedTokens.admin}`, 'bob', 'write');
});
afterAll(async () => {
  await svc.close();
});

const prodVersions = async () =>
  (
    (
      await callFunction(svc.url, `Bearer ${alice}`, 'svc/flow_def/public/file_versions', {
        ...REPO,
        flow_path: 'flows/deploy',
        path: 'prod.yml',
      })
    ).body.value as { versions: unknown[] }
  ).versions.length;
const keepCopy = (token: string, path: string, content: string) =>
  callFunction(svc.url, `Bearer ${token}`, 'svc/flow_def/action/keep_copy/run', {
    ...REPO,
    flow_path: 'flows/scratch',
    path,
    content,
    hash: sha(content),
  });
const copies = (member: string) =>
  svc.read(
    `SELECT v.path FROM file_versions v JOIN members m ON m.id = v.member_id
     WHERE v.conflict_copy = 1 AND m.name = '${member}' ORDER BY v.version`,
  );

describe('history cannot be erased by a writer', () => {
  it("a writer's conflict copies leave every other file's versions", async () => {
    let base: string | undefined;
    for (let n = 0; n < 8; n++) {
      const content = `${n}${'x'.repeat(100 * KIB)}`;
      const reply = await callFunction(svc.url, `Bearer ${alice}`, 'svc/flow_def/action/sync_batch/run', {
        ...REPO,
        flows: [
          {
            flow_path: 'flows/deploy',
            files: [{ path: 'prod.yml', content, hash: sha(content), ...(base && { base_hash: base }) }],
          },
        ],
      });
      expect(reply.statusCode).toBe(200);
      base = sha(content);
    }
    expect(await prodVersions()).toBe(8);

    // The measured erasure: two copies of 600 KiB. Refused now: over what one member's copies may hold.
    for (const path of ['a.yml', 'b.yml']) {
      const refused = await keepCopy(bob, path, 'y'.repeat(600 * KIB));
      expect(refused.statusCode).toBe(422);
      expect(refused.body.errorMessage).toMatch(
        /^A conflict copy of 614400 bytes is over what the service keeps \(262144 bytes/,
      );
    }

    // Within the bound, a member's new copies push out only their own older ones.
    for (const path of ['c1.yml', 'c2.yml', 'c3.yml'])
      expect((await keepCopy(bob, path, `${path}${'z'.repeat(200 * KIB)}`)).statusCode).toBe(200);
    expect(copies('bob')).toEqual([{ path: 'c3.yml' }]);
    expect((await keepCopy(alice, 'd1.yml', `d1${'w'.repeat(200 * KIB)}`)).statusCode).toBe(200);

    // 700 KiB of prod.yml's past and two copies of 200 KiB: over the 1 MiB cap. The next prune (at a start) takes a
    // copy, the oldest, and nothing of prod.yml.
    await svc.restart();
    expect(await prodVersions()).toBe(8);
    expect([...copies('bob'), ...copies('alice')]).toEqual([{ path: 'd1.yml' }]);

    const audit = await callFunction(
      svc.url,
      `Admin ${svc.sharedTokens.admin}`,
      'svc/members/private/audit',
      {
        action: 'history_capped',
      },
    );
    const cut = (audit.body.value as AuditValue).events[0]!;
    expect(cut).toMatchObject({ actor: { local: 'system' }, target: 'acme/app', detail: { versions: 1 } });
    const filledBy = cut.detail.filled_by as { member: string; bytes: number }[];
    expect(filledBy.map((row) => row.member)).toEqual(['alice', 'bob']);
  });
});

describe('a kept copy’s number', () => {
  it('is the row each call inserted: two members keeping copies of one file at once are each told their own', async () => {
    // On Postgres each member's copies are counted under their own lock, so two members' keep_copy calls of one
    // file run at once; the number answered was max(version) of the file's copies, which may be the other's.
    const made = await callFunction(svc.url, `Bearer ${alice}`, 'svc/flow_def/action/sync_batch/run', {
      ...REPO,
      flows: [
        { flow_path: 'flows/scratch', files: [{ path: 'same.yml', content: 'same\n', hash: sha('same\n') }] },
      ],
    });
    expect(made.statusCode).toBe(200);
    const kept = await Promise.all(
      Array.from({ length: 24 }, (_, n) => {
        const content = `copy ${n}\n`;
        return keepCopy(n % 2 === 0 ? alice : bob, 'same.yml', content).then((reply) => ({ reply, content }));
      }),
    );
    for (const { reply, content } of kept) {
      expect(reply.statusCode).toBe(200);
      const version = (reply.body.value as { version: number }).version;
      const read = await callFunction(svc.url, `Bearer ${alice}`, 'svc/flow_def/public/version_content', {
        version,
      });
      expect(read.body.value).toMatchObject({ path: 'same.yml', content, hash: sha(content) });
    }
  });
});
