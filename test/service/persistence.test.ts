import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { fileEntry } from '../support/flows.ts';
import { startTestService, type TestService } from '../support/service.ts';

let svc: TestService;
beforeEach(async () => {
  svc = await startTestService();
});
afterEach(async () => {
  await svc.close();
});

describe('the service database', () => {
  it('keeps flows, configs, keys and tokens across a restart, and issues no new tokens', async () => {
    await svc.call('svc/flow_def/action/sync_batch/run', {
      repo_owner: 'acme',
      repo_name: 'app',
      flows: [{ flow_path: 'flows/a', files: [fileEntry('main.yaml', 'v1')] }],
    });
    await svc.call('svc/repo_config/public/update', { owner: 'acme', name: 'app', editor: 'vim' });
    await svc.call('svc/tracker/private/workflow_state_cache_upsert', {
      team_id: 'ENG',
      states: [{ id: 's1', name: 'Todo', normalized_name: 'todo' }],
    });

    await svc.restart();
    expect(svc.service.issuedTokens).toBeNull();

    const again = await svc.call('svc/flow_def/action/sync_batch/run', {
      repo_owner: 'acme',
      repo_name: 'app',
      flows: [{ flow_path: 'flows/a', files: [fileEntry('main.yaml', 'v1')] }],
    });
    expect(again.statusCode).toBe(200);
    expect(again.body.value).toMatchObject({ skipped: true, files_created: 0 });
    const states = await svc.call('svc/tracker/private/workflow_state_cache_get_by_team', { team_id: 'ENG' });
    expect(states.body.value).toMatchObject({ states: [{ id: 's1', name: 'Todo' }] });
    expect(svc.read('SELECT config FROM repo_configs')).toEqual([{ config: '{"editor":"vim"}' }]);
  });

  it('stores only the SHA-256 of the tokens', async () => {
    const stored = JSON.stringify(svc.read('SELECT * FROM access_tokens'));
    expect(stored).not.toContain(svc.tokens.user);
    expect(stored).not.toContain(svc.tokens.admin);
    expect(svc.read('SELECT kind FROM access_tokens ORDER BY kind')).toEqual([
      { kind: 'admin' },
      { kind: 'user' },
    ]);
  });
});
