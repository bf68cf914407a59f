/** Prints docs/team-service.md's tables of functions from the protocol's function table (the one source of truth). */
import { extensionsMarkdownTable, functionsMarkdownTable } from '../src/protocol/index.ts';

console.log(process.argv[2] === '--extensions' ? extensionsMarkdownTable() : functionsMarkdownTable());
