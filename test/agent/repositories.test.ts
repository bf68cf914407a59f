import { execFileSync } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { identifyRepository, parseRemoteUrl } from '../../src/agent/index.ts';
import { makeRepo, type TestRepo } from '../support/repo.ts';

let repo: TestRepo | null = null;
afterEach(() => {
  repo?.cleanup();
  repo = null;
});

describe('owner/name of a repository', () => {
  it.each([
    ['git@github.com:acme/app.git', { owner: 'acme', name: 'app' }],
    ['https://github.com/acme/app', { owner: 'acme', name: 'app' }],
    ['https://github.com/acme/app.git/', { owner: 'acme', name: 'app' }],
    ['ssh://git@gitlab.example.com:2222/group/sub/app.git', { owner: 'group/sub', name: 'app' }],
    ['https://user:pw@example.com/acme/app.git', { owner: 'acme', name: 'app' }],
    ['not-a-remote', null],
  ])('reads %s', (url, expected) => {
    expect(parseRemoteUrl(url)).toEqual(expected);
  });

  it('comes from the origin remote, else from the folder name', async () => {
    repo = makeRepo({ 'flows/a/x.yaml': 'x' });
    expect(await identifyRepository(repo.root)).toMatchObject({ owner: 'local', name: 'repo' });
    execFileSync('git', ['-C', repo.root, 'init', '-q']);
    execFileSync('git', ['-C', repo.root, 'remote', 'add', 'origin', 'git@github.com:acme/widgets.git']);
    expect(await identifyRepository(repo.root)).toMatchObject({ owner: 'acme', name: 'widgets' });
    expect(
      await identifyRepository(repo.root, {
        path: repo.root,
        name: 'override',
        flowRoots: ['flows'],
        enabled: true,
      }),
    ).toMatchObject({
      owner: 'acme',
      name: 'override',
    });
  });
});
