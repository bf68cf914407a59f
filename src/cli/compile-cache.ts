import { mkdirSync } from 'node:fs';
import { enableCompileCache } from 'node:module';
import { homedir } from 'node:os';
import { join } from 'node:path';

/**
 * flowsync's cache folder, as env-paths names it (~/.cache/flowsync on Linux, ~/Library/Caches/flowsync on macOS,
 * %LOCALAPPDATA%\flowsync\Cache on Windows), worked out here rather than imported: main.ts asks it before any
 * command, and importing env-paths there cost `flowsync --version` 10 million instructions (about 6 %; the
 * package's resolution, not its code). test/cli/compile-cache.test.ts holds it to env-paths' answer.
 */
export function cacheFolder(
  platform: NodeJS.Platform = process.platform,
  env: NodeJS.ProcessEnv = process.env,
  home = homedir(),
): string {
  if (platform === 'darwin') return join(home, 'Library', 'Caches', 'flowsync');
  if (platform === 'win32')
    return join(env.LOCALAPPDATA || join(home, 'AppData', 'Local'), 'flowsync', 'Cache');
  return join(env.XDG_CACHE_HOME || join(home, '.cache'), 'flowsync');
}

/**
 * V8's compile cache (Node 22.1+) for every module loaded after this call, ours and our dependencies': a command
 * that runs again skips parsing and compiling what it ran before (`flowsync status` with no repository: 443 → 401
 * million instructions, valgrind; docs/memory.md). In the user's own cache folder, made 0700: V8 trusts the code it
 * reads there, so no other user may write it, where Node's default, a folder in the shared temporary one, would let
 * them. An entry is used only while its module's source is unchanged, and each Node version has its own. Not when
 * NODE_COMPILE_CACHE is set (Node has it enabled already, there), nor where the folder cannot be made: a cache,
 * never a reason to fail.
 */
export function enableModuleCache(env: NodeJS.ProcessEnv = process.env): void {
  if (typeof enableCompileCache !== 'function' || env.NODE_COMPILE_CACHE) return;
  const folder = join(cacheFolder(), 'compile-cache');
  try {
    mkdirSync(folder, { recursive: true, mode: 0o700 });
    enableCompileCache(folder);
  } catch {
    // No cache: slower starts, nothing else.
  }
}
