import { enableModuleCache } from './compile-cache.ts';

// A reader that stops early (`flowsync status --help | head -3`, `doctor --json | jq` ending first): the rest of the
// output has nowhere to go, which is no failure of the command. Node reports it as an uncaught EPIPE, with a stack.
// An agent or a service (`start | tee log`, its reader gone) goes on with nothing printed: its work is not its output.
const runs = ['start', 'ui', 'serve'].includes(
  process.argv.find((arg, n) => n > 1 && !arg.startsWith('-')) ?? '',
);

/**
 * V8's heap for the processes that run all day (start, ui, serve), first its young generation. On Node 24, V8 sizes it from the
 * machine's memory: 64 MB semi-spaces on a 24 GB machine, so the agent's new space grew to 128 MB during a first
 * pass and stayed there at rest, garbage included (V8 never shrinks it back: docs/memory.md). Node 20 capped it at
 * 16 MB. 8 MB: the agent at rest after a first pass of 20,000 files 259 → 200 MB, its first pass's CPU no higher
 * (docs/memory.md has the runs). It can only be set when the process starts (v8.setFlagsFromString after start
 * changes nothing), so the process replaces itself once with the flag (execve: same pid, same descriptors). Not
 * where execve is missing (Windows) nor in Electron (its utility process gets it in execArgv: electron/main.ts),
 * and not when the flag is already given (NODE_OPTIONS, or a second start).
 *
 * With it, glibc's malloc is told to serve every block of 128 KiB or more by mmap (MALLOC_MMAP_THRESHOLD_, read
 * when the process starts). By default glibc raises that threshold each time such a block is freed, up to 32 MiB,
 * so the request bodies, upload chunks and SQLite pages of a first pass were then carved from its heap and kept
 * after free: at 100,000 files, at rest, the agent 139-164 → 119 MB and `flowsync serve` 144 → 120 MB, the agent's
 * high-water mark 292-401 → 247 MB (docs/memory.md). A value the user set is kept.
 *
 * And the old generation grows by 25 % from one full collection's live size to the next one's start, not by V8's
 * own factor (up to 4 × on a machine with memory to spare): a first pass of 100,000 files makes garbage fast, and
 * V8 let it pile up, 210 MB of old space of which a heap snapshot found 20 MB live. The agent's high-water mark
 * 306-327 → 191 MB, its CPU no higher (15.0 s against 14.2-18.0 s at load 0.7-2; docs/memory.md).
 */
const HEAP_FLAGS = ['--max-semi-space-size=8', '--heap-growing-percent=25'];
const flagged = [...process.execArgv, ...(process.env.NODE_OPTIONS ?? '').split(/\s+/)].some((arg) =>
  arg.startsWith('--max-semi-space-size'),
);
// Nor with an IPC channel to a parent (the desktop handshake, `flowsync ui` forked): Node takes NODE_CHANNEL_FD out
// of the environment as it starts, so the replaced process lost the channel and never said it was ready.
if (
  runs &&
  !flagged &&
  typeof process.execve === 'function' &&
  !process.versions.electron &&
  process.send === undefined
) {
  process.execve(
    process.execPath,
    [process.execPath, ...HEAP_FLAGS, ...process.execArgv, ...process.argv.slice(1)],
    { MALLOC_MMAP_THRESHOLD_: String(128 * 1024), ...process.env },
  );
}

// Before the commands' modules load (and after the re-exec above, which would start over).
enableModuleCache();

for (const stream of [process.stdout, process.stderr])
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') throw error;
    if (!runs) process.exit(typeof process.exitCode === 'number' ? process.exitCode : 0);
  });

const { runCli } = await import('./program.ts');
const code = await runCli(process.argv);
// Long-running commands (serve, start) keep the process alive themselves; the others end here.
if (code !== 0) process.exit(code);
