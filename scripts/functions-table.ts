/** Prints the README's table of functions from the protocol's function table (the one source of truth). */
import { functionsMarkdownTable } from '../src/protocol/index.ts';

console.log(functionsMarkdownTable());
