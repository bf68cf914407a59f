import { createHash } from 'node:crypto';
import { printable } from '../protocol/index.ts';

/**
 * Content a service answers is checked here, once, for every function (the service boundary): a file's `content`
 * must be what its `hash` names (the spec: the hex SHA-256 of its UTF-8 bytes). A service that gave other bytes
 * under a hash had them written into the checkout and recorded under that hash; the next scan found the disk
 * different from the record and sent the tampered bytes back as this checkout's own edit, under its name.
 */

/** The value's first file (itself, or an element of one of its arrays) whose content is not what its hash names. */
export function contentNotItsHash(value: unknown): string | null {
  for (const file of filesOf(value)) {
    if (typeof file.content !== 'string') continue;
    const hash = createHash('sha256').update(file.content, 'utf8').digest('hex');
    if (hash === file.hash) continue;
    const name =
      typeof file.flow_path === 'string' && typeof file.path === 'string'
        ? `${file.flow_path}/${file.path}`
        : 'a file';
    const said = typeof file.hash === 'string' ? `its hash ${file.hash.slice(0, 12)}…` : 'no hash';
    return `content for ${printable(name.slice(0, 300))} that is not what its hash names (it hashes to ${hash.slice(0, 12)}…, the answer says ${printable(said.slice(0, 40))})`;
  }
  return null;
}

/** The value itself and the records of its arrays: where a service's answers carry files (list_files, version_content). */
function* filesOf(value: unknown): Generator<Record<string, unknown>> {
  if (!isRecord(value)) return;
  yield value;
  for (const field of Object.values(value))
    if (Array.isArray(field)) for (const item of field) if (isRecord(item)) yield item;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
