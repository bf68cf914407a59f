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

/** The longest writer name the service keeps (a longer one is stored as no name: see the service's writerOf). */
const WRITER_MAX = 200;

/**
 * The writer a checkout's versions carry: its label for people, and its own id beside it, the part that tells it
 * apart (`ada@laptop:~/code/app (checkout 3f9a2c41b0d6)`). The label is shortened, never the id, to fit the
 * service's limit.
 */
export function checkoutWriter(label: string, checkoutId: string): string {
  const id = ` (checkout ${checkoutId})`;
  const room = WRITER_MAX - id.length;
  return `${label.length > room ? `${label.slice(0, room - 1)}…` : label}${id}`;
}
