// Owns the `flowsync` command: each command composes the layers below and speaks to the terminal.
// May import: every layer.
export { buildProgram, runCli, COMMANDS, EXIT } from './program.ts';
