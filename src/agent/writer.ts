import { homedir, hostname, userInfo } from 'node:os';

/**
 * How the service's history names a checkout's writes, for the other developers who read it:
 * `ada@laptop:~/code/app`. The user and machine say who; the folder says which checkout (two worktrees of one
 * repository are told apart).
 */
export function writerName(root: string, home = homedir()): string {
  let user = 'someone';
  try {
    user = userInfo().username || user;
  } catch {
    // No passwd entry for this uid (a container): the name stays generic.
  }
  const folder =
    home && (root === home || root.startsWith(`${home}/`)) ? `~${root.slice(home.length)}` : root;
  return `${user}@${hostname()}:${folder}`;
}
