import { runCli } from './program.ts';

// A reader that stops early (`flowsync status --help | head -3`, `doctor --json | jq` ending first): the rest of the
// output has nowhere to go, which is no failure of the command. Node reports it as an uncaught EPIPE, with a stack.
for (const stream of [process.stdout, process.stderr])
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') process.exit(typeof process.exitCode === 'number' ? process.exitCode : 0);
    throw error;
  });

const code = await runCli(process.argv);
// Long-running commands (serve, start) keep the process alive themselves; the others end here.
if (code !== 0) process.exit(code);
