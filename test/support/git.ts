import { execFileSync } from 'node:child_process';

const IDENTITY = {
  GIT_AUTHOR_NAME: 'flowsync test',
  GIT_AUTHOR_EMAIL: 'test@flowsync.invalid',
  GIT_COMMITTER_NAME: 'flowsync test',
  GIT_COMMITTER_EMAIL: 'test@flowsync.invalid',
};

/** Runs git in a repository folder, with an identity so that commits work on a machine with no git config. */
export function gitIn(root: string): (...args: string[]) => void {
  return (...args) => {
    execFileSync('git', ['-C', root, ...args], { env: { ...process.env, ...IDENTITY }, stdio: 'ignore' });
  };
}

/**
 * Commits the tree as branch `main`, lets `change` rewrite it, commits that as branch `other`, and checks `main`
 * out again: two branches to switch between.
 */
export function twoBranches(root: string, change: () => void): (...args: string[]) => void {
  const git = gitIn(root);
  git('init', '-q', '-b', 'main');
  git('add', '-A');
  git('commit', '-q', '-m', 'main');
  git('checkout', '-q', '-b', 'other');
  change();
  git('add', '-A');
  git('commit', '-q', '-m', 'other');
  git('checkout', '-q', 'main');
  return git;
}
