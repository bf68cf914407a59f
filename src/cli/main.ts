import { runCli } from './program.ts';

const code = await runCli(process.argv);
// Long-running commands (serve, start) keep the process alive themselves; the others end here.
if (code !== 0) process.exit(code);
