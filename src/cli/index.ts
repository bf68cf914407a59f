export { buildProgram, runCli, EXIT } from './program.ts';
