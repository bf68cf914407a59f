import { runCli } from './program.ts';

// A reader that stops early (`flowsync status --help | head -3`, `doctor --json | jq` ending first): the rest of the
// output has nowhere to go, which is no failure of the command. Node reports it as an uncaught EPIPE, with a stack.
// An agent or a service (`start | tee log`, its reader gone) goes on with nothing printed: its work is not its output.
const runs = ['start', 'ui', 'serve'].includes(
  process.argv.find((arg, n) => n > 1 && !arg.startsWith('-')) ?? '',
);
for (const stream of [process.stdout, process.stderr])
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') throw error;
    if (!runs) process.exit(typeof process.exitCode === 'number' ? process.exitCode : 0);
  });

const code = await runCli(process.argv);
// Long-running commands (serve, start) keep the process alive themselves; the others end here.
if (code !== 0) process.exit(code);
