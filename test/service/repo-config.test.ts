import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/service.ts';

const UPDATE = 'svc/repo_config/public/update';
let svc: TestService;
beforeEach(async () => {
  svc = await startTestService();
});
afterEach(async () => {
  await svc.close();
});

const fullConfig = {
  owner: 'acme',
  name: 'app',
  artifact_config: { dir: 'dist' },
  backend_config: { url: 'http://localhost:3000', retries: 3, flags: [true, null] },
  background_jobs: [{ name: 'dev', command: 'npm run dev', description: 'dev server' }],
  assistant_config: { model: 'large', permission_mode: 'ask' },
  copy_ignored_files: ['.env.local'],
  editor: 'code',
  service_config: ['anything', 1],
  user: 'ada',
};

describe('repo_config update', () => {
  it('refuses a config whose file would be over 1 MiB, as a flow file is refused, and stores nothing', async () => {
    const reply = await svc.call(
      UPDATE,
      { owner: 'acme', name: 'app', service_config: 'x'.repeat(1024 * 1024) },
      'user',
    );
    expect(reply.statusCode).toBe(422);
    expect(reply.body.errorMessage).toMatch(
      /^The repository config is 1,025 KiB as a file, over the 1 MiB a file may be/,
    );
    expect(svc.read('SELECT 1 FROM repo_configs')).toEqual([]);
  });

  it('stores every field and returns the record', async () => {
    const reply = await svc.call(UPDATE, fullConfig, 'user');
    expect(reply.statusCode).toBe(200);
    const { owner, name, ...config } = fullConfig;
    expect(reply.body.value).toMatchObject({ ...config, owner, name });
    const [row] = svc.read<{ config: string }>(
      'SELECT config FROM repo_configs WHERE owner = ? AND name = ?',
      owner,
      name,
    );
    expect(JSON.parse(row!.config)).toEqual(config);
  });

  it('replaces the whole document on the next update (upsert by owner and name)', async () => {
    await svc.call(UPDATE, fullConfig);
    await svc.call(UPDATE, { owner: 'acme', name: 'app', editor: 'vim' });
    const rows = svc.read<{ config: string }>('SELECT config FROM repo_configs');
    expect(rows).toHaveLength(1);
    expect(JSON.parse(rows[0]!.config)).toEqual({ editor: 'vim' });
  });

  it('keys a GitLab subgroup repository by its whole owner (group/sub) and name', async () => {
    const reply = await svc.call(UPDATE, { owner: 'group/sub', name: 'app', editor: 'code' }, 'user');
    expect(reply.statusCode).toBe(200);
    expect(reply.body.value).toMatchObject({ owner: 'group/sub', name: 'app', editor: 'code' });
    expect(svc.read('SELECT owner, name FROM repo_configs')).toEqual([{ owner: 'group/sub', name: 'app' }]);
  });

  it.each([
    ['an owner with an empty part', { owner: 'group//app' }, 'owner'],
    ['an owner that climbs', { owner: 'group/..' }, 'owner'],
    ['a name with a slash', { name: 'sub/app' }, 'name'],
    [
      'a background job without a command',
      { background_jobs: [{ name: 'x', description: '' }] },
      'background_jobs',
    ],
    [
      'two background jobs with one name',
      {
        background_jobs: [
          { name: 'x', command: 'a', description: '' },
          { name: 'x', command: 'b', description: '' },
        ],
      },
      'background_jobs',
    ],
    ['assistant_config missing permission_mode', { assistant_config: { model: 'm' } }, 'assistant_config'],
    ['artifact_config.dir as a number', { artifact_config: { dir: 3 } }, 'artifact_config'],
  ])('refuses %s (400) and stores nothing', async (_name, change, field) => {
    const reply = await svc.call(UPDATE, { ...fullConfig, ...change });
    expect(reply.statusCode).toBe(400);
    expect(JSON.stringify(reply.body.errorData)).toContain(field);
    expect(svc.read('SELECT * FROM repo_configs')).toEqual([]);
  });
});
