import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createClient, repoConfigConflictOf, type RemoteClient } from '../../src/client/index.ts';
import { repoConfigHashInput, type RepoConfig } from '../../src/protocol/index.ts';
import { testDatabase, type TestDatabase } from '../support/service.ts';
import { startServeProcess, type ServeProcess } from '../support/serve-process.ts';

/**
 * Issue 41: a repository's config has a base as a flow's files have. On one real `flowsync serve` (a SQLite file,
 * or a Postgres database in the Postgres pass), an update on a stale base is refused with the service's config, who
 * wrote it and when, and the stored row is left as it was; a client of the spec alone (no base) still writes.
 */
/** As the agent keeps it: SHA-256 of the config's canonical JSON (the one definition, in src/protocol). */
const repoConfigHash = (config: RepoConfig) =>
  createHash('sha256').update(repoConfigHashInput(config)).digest('hex');

let dir: string;
let serve: ServeProcess;
let ada: RemoteClient;
let bob: RemoteClient;
let database: TestDatabase | undefined;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'flowsync-repo-config-'));
  database = await testDatabase(dir);
  serve = await startServeProcess(database.location, join(dir, 'serve.log'));
  const auth = { userToken: serve.tokens.user };
  ada = createClient({ baseUrl: serve.url, auth, writer: 'ada@laptop:~/code/app' });
  bob = createClient({ baseUrl: serve.url, auth, writer: 'bob@desk:~/src/app' });
});
afterEach(async () => {
  try {
    await Promise.all([ada?.close(), bob?.close()]);
  } finally {
    await serve?.stop();
    await database?.drop();
    database = undefined;
    rmSync(dir, { recursive: true, force: true });
  }
});

const update = (client: RemoteClient, editor: string, base?: string | null) =>
  client.repoConfig.update({
    owner: 'acme',
    name: 'app',
    editor,
    ...(base !== undefined && { base_hash: base }),
  });
const stored = () =>
  database!.read<{ config: string; written_by: string | null }>(
    "SELECT config, written_by FROM repo_configs WHERE owner = 'acme' AND name = 'app'",
  );
const refusal = async (call: Promise<unknown>) => {
  const error = await call.then(
    () => null,
    (thrown: unknown) => thrown,
  );
  return repoConfigConflictOf(error);
};

describe('repo_config/update with a base (capabilities repo_config_bases)', () => {
  it('is announced, and a write on a stale base is a conflict that names the service’s config; nothing written', async () => {
    expect((await ada.flowDef.capabilities({})).repo_config_bases).toBe(true);
    const first = await update(ada, 'vim', null);
    expect(first.hash).toBe(repoConfigHash({ editor: 'vim' }));
    expect(first.written_by).toBe('ada@laptop:~/code/app');

    // Bob, on the same base, writes first; Ada's write on it is refused, with Bob's config and who and when.
    await update(bob, 'emacs', first.hash);
    const current = await refusal(update(ada, 'code', first.hash));
    expect(current).toMatchObject({ editor: 'emacs', written_by: 'bob@desk:~/src/app' });
    expect(current!.hash).toBe(repoConfigHash({ editor: 'emacs' }));
    expect(current!.updated_at).toMatch(/^\d{4}-\d\d-\d\dT/);
    expect(stored()).toEqual([
      { config: JSON.stringify({ editor: 'emacs' }), written_by: 'bob@desk:~/src/app' },
    ]);

    // "I believe there is none" while there is one: refused too.
    expect(await refusal(update(ada, 'code', null))).toMatchObject({ editor: 'emacs' });
    // The same config as the service's, on any base: taken (a lost answer sent again), nothing changes.
    expect((await update(ada, 'emacs', first.hash)).hash).toBe(current!.hash);
    // On the service's hash (keep mine): written.
    expect((await update(ada, 'code', current!.hash)).written_by).toBe('ada@laptop:~/code/app');
    expect(stored()).toEqual([
      { config: JSON.stringify({ editor: 'code' }), written_by: 'ada@laptop:~/code/app' },
    ]);
  });

  it('two writers on one base at once: one is written, the other is a conflict', async () => {
    const base = (await update(ada, 'vim', null)).hash!;
    const answers = await Promise.allSettled([update(ada, 'code', base), update(bob, 'emacs', base)]);
    expect(answers.filter((answer) => answer.status === 'fulfilled')).toHaveLength(1);
    const refused = answers.find((answer) => answer.status === 'rejected')!;
    expect(repoConfigConflictOf((refused as PromiseRejectedResult).reason)).not.toBeNull();
  });

  it('without a base (a client of the spec alone) the last writer wins, as the spec has it', async () => {
    await update(ada, 'vim');
    await update(bob, 'emacs');
    expect(JSON.parse(stored()[0]!.config)).toEqual({ editor: 'emacs' });
  });
});
