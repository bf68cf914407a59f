import { unsafePathReason, type FileEntry } from '../../../protocol/index.ts';
import { CallRefused } from '../../errors.ts';
import { sha256Hex } from '../../hash.ts';

/** Every path safe and unique within its flow, every hash the SHA-256 of its content; checked before any write. */
export function checkFiles(files: readonly FileEntry[], where: (string | number)[]): void {
  const seen = new Set<string>();
  files.forEach((file, index) => {
    refuseUnsafePath(file.path, [...where, index, 'path']);
    if (seen.has(file.path)) {
      throw new CallRefused(
        `${[...where, index, 'path'].join('.')} "${file.path}" appears twice in the flow.`,
        {
          path: [...where, index, 'path'],
        },
      );
    }
    seen.add(file.path);
    if (sha256Hex(file.content) !== file.hash) {
      throw new CallRefused(
        `${[...where, index, 'hash'].join('.')} is not the SHA-256 of the content of "${file.path}": nothing was written.`,
        { path: [...where, index, 'hash'] },
      );
    }
  });
}

/** Deletions name safe paths, once each, with a hash as base. */
export function checkDeletes(deletes: readonly { path: string }[], where: (string | number)[]): void {
  const seen = new Set<string>();
  deletes.forEach(({ path }, index) => {
    refuseUnsafePath(path, [...where, index, 'path']);
    if (seen.has(path))
      throw new CallRefused(`${[...where, index, 'path'].join('.')} "${path}" appears twice.`, {
        path: [...where, index, 'path'],
      });
    seen.add(path);
  });
}

export function refuseUnsafePath(path: string, where: (string | number)[]): void {
  const reason = unsafePathReason(path);
  if (reason) {
    throw new CallRefused(`${where.join('.')} "${path.slice(0, 200)}" ${reason}: nothing was written.`, {
      path: where,
    });
  }
}
