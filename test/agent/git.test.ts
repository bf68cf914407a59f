import { afterEach, describe, expect, it } from 'vitest';
import { gitConfig, remoteUrl, userEmail } from '../../src/agent/index.ts';
import { gitIn } from '../support/git.ts';
import { makeRepo, type TestRepo } from '../support/repo.ts';

let repo: TestRepo | null = null;
afterEach(() => {
  repo?.cleanup();
  repo = null;
});

describe('git config reads', () => {
  it("read the repository's own config, trimmed", async () => {
    repo = makeRepo({ 'flows/a/x.yaml': 'x' });
    const git = gitIn(repo.root);
    git('init', '-q');
    expect(await remoteUrl(repo.root)).toBeNull();
    git('remote', 'add', 'origin', 'git@github.com:acme/widgets.git');
    git('config', 'user.email', 'ada@example.com');
    git('config', 'flowsync.empty', '');
    expect(await remoteUrl(repo.root)).toBe('git@github.com:acme/widgets.git');
    expect(await userEmail(repo.root)).toBe('ada@example.com');
    expect(await gitConfig(repo.root, 'flowsync.empty')).toBeNull();
  });

  it('are null in a folder that is not a repository', async () => {
    repo = makeRepo({ 'flows/a/x.yaml': 'x' });
    expect(await remoteUrl(repo.root)).toBeNull();
    expect(await gitConfig(repo.root, 'remote.origin.url')).toBeNull();
  });
});
