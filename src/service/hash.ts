import { createHash } from 'node:crypto';
import { flowHashInput } from '../protocol/index.ts';

export function sha256Hex(data: string | Buffer): string {
  return createHash('sha256').update(data).digest('hex');
}

/** A flow's aggregate hash: SHA-256 of flowHashInput (the one definition, in src/protocol). */
export function flowAggregateHash(files: Iterable<{ path: string; hash: string }>): string {
  return sha256Hex(flowHashInput(files));
}
