import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuditValue } from '../../src/protocol/index.ts';
import { memberToken } from '../support/members.ts';
import { callFunction, membersPass, startTestService, type TestService } from '../support/service.ts';

/**
 * The audit log (issue 48), on a real service and database (SQLite, and Postgres in that pass): operator actions
 * and mass changes are recorded with the member whose credential made the call, whatever the client says about
 * itself; the hash chain verifies, and names the first row changed or removed under the service.
 */
let svc: TestService;
let dana: string;
let alice: string;
let bob: string;
const REPO = { repo_owner: 'acme', repo_name: 'app' };
const sha = (text: string) => createHash('sha256').update(text).digest('hex');

beforeAll(async () => {
  // The members' pass (FLOWSYNC_TEST_TOKENS=members) adds members of its own: these tests count them.
  if (membersPass) return;
  svc = await startTestService();
  const shared = `Admin ${svc.sharedTokens.admin}`;
  dana = await memberToken(svc.url, shared, 'dana', 'operator');
  alice = await memberToken(svc.url, shared, 'alice', 'write');
  bob = await memberToken(svc.url, shared, 'bob', 'write');
});
afterAll(async () => {
  await svc?.close();
});

/** A call with the label the client claims for itself. */
const send = (
  authorization: string,
  path: string,
  args: Record<string, unknown>,
  label = 'someone-else@host',
) =>
  svc.raw(`/api/run/${path}`, {
    body: JSON.stringify({
      args: { baggage: { trace_id: 'audit-test', traffic_type: 'external' }, ...args },
    }),
    headers: { 'content-type': 'application/json', authorization, 'x-flowsync-writer': label },
  });
const audit = async (args: Record<string, unknown> = {}) => {
  const reply = await callFunction(svc.url, `Admin ${dana}`, 'svc/members/private/audit', args);
  expect(reply.statusCode, reply.body.errorMessage).toBe(200);
  return reply.body.value as AuditValue;
};

describe.skipIf(membersPass)('the audit log', () => {
  it('names the credential’s member for purges, restores, mass deletions and member changes', async () => {
    const files = Array.from({ length: 60 }, (_, n) => ({ path: `f${n}.yml`, content: `n: ${n}\n` }));
    const written = await send(`Bearer ${alice}`, 'svc/flow_def/action/sync_batch/run', {
      ...REPO,
      flows: [{ flow_path: 'flows/ci', files: files.map((f) => ({ ...f, hash: sha(f.content) })) }],
    });
    expect(written.statusCode).toBe(200);
    const again = await send(`Bearer ${alice}`, 'svc/flow_def/action/sync_batch/run', {
      ...REPO,
      flows: [
        { flow_path: 'flows/ci', files: [{ path: 'f0.yml', content: 'n: 00\n', hash: sha('n: 00\n') }] },
      ],
    });
    expect(again.statusCode).toBe(200);
    const versions = await callFunction(svc.url, `Bearer ${alice}`, 'svc/flow_def/public/file_versions', {
      ...REPO,
      flow_path: 'flows/ci',
      path: 'f0.yml',
    });
    const first = (versions.body.value as { versions: { version: number }[] }).versions.at(-1)!.version;
    expect(
      (await send(`Bearer ${alice}`, 'svc/flow_def/action/restore_version/run', { version: first }))
        .statusCode,
    ).toBe(200);
    expect(
      (
        await send(`Admin ${dana}`, 'svc/flow_def/private/purge_history', {
          ...REPO,
          flow_path: 'flows/ci',
          path: 'f0.yml',
        })
      ).statusCode,
    ).toBe(200);
    const deleted = await send(`Bearer ${bob}`, 'svc/flow_def/action/sync_batch/run', {
      ...REPO,
      flows: [
        {
          flow_path: 'flows/ci',
          files: [],
          deletes: files.slice(1).map((f) => ({ path: f.path, base_hash: sha(f.content) })),
        },
      ],
    });
    expect((deleted.body.value as { files_deleted: number }).files_deleted).toBe(59);
    expect(
      (await callFunction(svc.url, `Admin ${dana}`, 'svc/members/private/remove', { name: 'bob' }))
        .statusCode,
    ).toBe(200);

    const { events } = await audit();
    const by = (action: string) => events.find((event) => event.action === action);
    expect(by('purge_history')).toMatchObject({
      actor: { member: 'dana', role: 'operator' },
      target: 'acme/app flows/ci/f0.yml',
      detail: { versions: 2 },
      trace_id: 'audit-test',
    });
    expect(by('restore_version')).toMatchObject({ actor: { member: 'alice' }, target: 'flows/ci/f0.yml' });
    expect(by('bulk_delete')).toMatchObject({ actor: { member: 'bob' }, detail: { deleted: 59 } });
    expect(by('member_removed')).toMatchObject({
      actor: { member: 'dana' },
      target: 'bob',
      detail: { tokens_revoked: 1 },
    });
    expect(
      events
        .filter((event) => event.action === 'member_added')
        .map((event) => event.target)
        .sort(),
    ).toEqual(['alice', 'bob', 'dana']);
    expect(by('invite_redeemed')).toMatchObject({ detail: { label: 'laptop' } });
    // Nothing in it is a secret: ids only.
    expect(JSON.stringify(events)).not.toMatch(/fs[mi]_[0-9A-Za-z]{10}_/);
    // Newest first, numbered in order.
    expect(events.map((event) => event.id)).toEqual(
      [...events.map((event) => event.id)].sort((a, b) => b - a),
    );
  });

  it('verifies, then names the first row changed under the service, or the row after one removed', async () => {
    expect((await audit({ verify: true })).verified).toEqual({ rows: expect.any(Number), broken: null });

    const { events } = await audit();
    const restore = events.find((event) => event.action === 'restore_version')!;
    svc.exec(`UPDATE audit_events SET target = 'flows/ci/other.yml' WHERE id = ${restore.id}`);
    expect((await audit({ verify: true })).verified!.broken).toEqual({
      id: restore.id,
      why: 'its fields do not match its hash (the row was changed)',
    });
    svc.exec(`UPDATE audit_events SET target = 'flows/ci/f0.yml' WHERE id = ${restore.id}`);
    expect((await audit({ verify: true })).verified!.broken).toBeNull();

    svc.exec(`DELETE FROM audit_events WHERE id = ${restore.id}`);
    expect((await audit({ verify: true })).verified!.broken).toEqual({
      id: restore.id + 1,
      why: 'its link to the row before does not match (a row removed or put in)',
    });
  });

  it('is for operators: a member who writes gets a 403', async () => {
    const reply = await callFunction(svc.url, `Admin ${alice}`, 'svc/members/private/audit', {});
    expect(reply.statusCode).toBe(403);
  });
});
