import { lstatSync, mkdtempSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';

/**
 * The longest Unix socket path used, in bytes: the kernel's `sun_path` holds 108 on Linux and 104 on macOS, its
 * terminating NUL included; a longer one cannot be listened on at all.
 */
export const MAX_SOCKET_PATH = 100;

/** Where a private Unix socket goes, and how to clear that place when its server closes. */
export interface SocketPlace {
  path: string;
  /** The socket file, and the folder made for it when it is not in the data folder. */
  remove(): void;
}

/**
 * A place for a Unix socket that only this user can reach: `name` in `folder` (the 0700 data folder) when that
 * path is short enough; else in a folder of its own made for this run (mkdtemp: 0700, under a random name nobody
 * else made first) in `$XDG_RUNTIME_DIR` (the user's own, 0700) or /tmp (whose sticky bit keeps others from moving
 * it). Null on Windows, which has no such socket, and when even those paths are too long.
 */
export function privateSocketPlace(
  folder: string,
  name: string,
  elsewhere: (string | undefined)[] = [process.env.XDG_RUNTIME_DIR, '/tmp'],
): SocketPlace | null {
  if (process.platform === 'win32') return null;
  const inFolder = join(folder, name);
  if (Buffer.byteLength(inFolder) <= MAX_SOCKET_PATH) return removedAtExit(inFolder, inFolder);
  for (const base of elsewhere) {
    // The folder's name adds 16 bytes (`/flowsync-XXXXXX`), and `/` and the socket's name.
    if (!base || Buffer.byteLength(join(base, 'flowsync-XXXXXX', name)) > MAX_SOCKET_PATH) continue;
    let made: string;
    try {
      made = mkdtempSync(join(base, 'flowsync-'));
    } catch {
      continue; // not there, or not writable: the next place
    }
    return removedAtExit(join(made, name), made);
  }
  return null;
}

/**
 * A place whose `remove` takes away `made` (the socket, or the folder made for it), and which the process's exit
 * takes away too when nothing did before: stopping gives up waiting for the service after 1.5 s and exits.
 */
function removedAtExit(path: string, made: string): SocketPlace {
  const remove = () => {
    process.off('exit', remove);
    rmSync(made, { recursive: true, force: true });
  };
  process.once('exit', remove);
  return { path, remove };
}

/**
 * Whether a socket path (from the agent lock) is in a folder only this user can enter: a real folder of this user's,
 * with no group or other bits. A client checks it before it sends the agent's token there: a folder of /tmp left
 * behind could be another user's after a clean-up removed ours.
 */
export function inPrivateFolder(socketPath: string): boolean {
  if (process.platform === 'win32') return false;
  const folder = lstatSync(dirname(socketPath), { throwIfNoEntry: false });
  return (
    folder !== undefined &&
    folder.isDirectory() &&
    folder.uid === process.getuid!() &&
    (folder.mode & 0o077) === 0
  );
}
