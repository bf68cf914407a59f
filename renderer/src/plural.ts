// The window says counts as the CLI does: one rule, in src/protocol.
export { plural } from '../../src/protocol/index.ts';
