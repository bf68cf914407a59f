export { buildProgram, runCli, COMMANDS, EXIT } from './program.ts';
