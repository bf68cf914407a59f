import { execFileSync, spawnSync } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { currentBranch, gitConfig, remoteUrl, userEmail } from '../../src/agent/index.ts';
import { REGISTER_TSX } from '../support/cli.ts';
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

  it("name no origin for a folder outside git, whatever the user's own config says (git is not run there)", async () => {
    repo = makeRepo({ 'flows/a/x.yaml': 'x' });
    const global = join(repo.dir, 'gitconfig');
    writeFileSync(global, '[remote "origin"]\n\turl = git@github.com:someone/else.git\n');
    const before = process.env.GIT_CONFIG_GLOBAL;
    process.env.GIT_CONFIG_GLOBAL = global;
    try {
      expect(await gitConfig(repo.root, 'remote.origin.url')).toBe('git@github.com:someone/else.git');
      expect(await remoteUrl(repo.root)).toBeNull();
    } finally {
      if (before === undefined) delete process.env.GIT_CONFIG_GLOBAL;
      else process.env.GIT_CONFIG_GLOBAL = before;
    }
  });
});

describe('the branch of a checkout, read from its HEAD file', () => {
  it('names the branch, a detached HEAD, a worktree and a subfolder as git does, and nothing outside git', () => {
    repo = makeRepo({ 'flows/a/x.yaml': 'x' });
    expect(currentBranch(repo.root)).toBeNull();
    const git = gitIn(repo.root);
    git('init', '-q', '-b', 'main');
    // An unborn branch (no commit yet) is still the branch HEAD names.
    expect(currentBranch(repo.root)).toBe('main');
    git('add', '-A');
    git('commit', '-q', '-m', 'first');
    git('checkout', '-q', '-b', 'feat/x');
    expect(currentBranch(repo.root)).toBe('feat/x');
    git('checkout', '-q', '--detach');
    const head = execFileSync('git', ['-C', repo.root, 'rev-parse', 'HEAD'], { encoding: 'utf8' }).trim();
    expect(currentBranch(repo.root)).toBe(`detached at ${head.slice(0, 7)}`);
    // A worktree's .git is a file naming its own git folder, with its own HEAD.
    const worktree = join(repo.dir, 'app-feat');
    git('worktree', 'add', '-q', '-b', 'feat-y', worktree);
    expect(currentBranch(worktree)).toBe('feat-y');
    expect(currentBranch(repo.root)).toBe(`detached at ${head.slice(0, 7)}`);
    // A folder inside a repository is on that repository's branch.
    mkdirSync(join(worktree, 'sub'));
    expect(currentBranch(join(worktree, 'sub'))).toBe('feat-y');
  });
});

describe("the branch of a repository whose .git is not git's", () => {
  it('is none for a .git linked to /dev/zero, a HEAD that is a FIFO or a link out, and reading it does not hang', () => {
    // A tarball or a hostile clone can hold any of these. A plain read of /dev/zero fills memory; of a FIFO, waits
    // for ever: so each is asked in a child process with a time limit, which the read before the fix overran.
    repo = makeRepo({ 'zero/flows/a/x.yaml': 'x', 'fifo/.git/refs/heads/.keep': '', 'link/.git/x': '' });
    symlinkSync('/dev/zero', join(repo.root, 'zero/.git'));
    execFileSync('mkfifo', [join(repo.root, 'fifo/.git/HEAD')]);
    writeFileSync(join(repo.dir, 'outside'), 'ref: refs/heads/secret\n');
    symlinkSync(join(repo.dir, 'outside'), join(repo.root, 'link/.git/HEAD'));
    const script =
      "const { currentBranch } = await import('./src/agent/index.ts');" +
      `console.log(JSON.stringify(['zero', 'fifo', 'link'].map((f) => currentBranch(${JSON.stringify(repo.root)} + '/' + f))));`;
    const child = spawnSync(
      process.execPath,
      ['--import', REGISTER_TSX, '--input-type=module', '-e', script],
      {
        cwd: fileURLToPath(new URL('../..', import.meta.url)),
        encoding: 'utf8',
        timeout: 20_000,
      },
    );
    expect(child.error, child.stderr).toBeUndefined();
    expect(JSON.parse(child.stdout)).toEqual([null, null, null]);
  });
});
