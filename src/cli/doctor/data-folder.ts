import { existsSync } from 'node:fs';
import { basename, dirname } from 'node:path';
import { tilde } from '../../agent/index.ts';
import {
  defaultStatePath,
  describeStorageFault,
  folderFault,
  looseModes,
  storageFaultRemedy,
} from '../../host/index.ts';
import type { DoctorCheck } from '../../protocol/index.ts';
import { failure, passed } from './verdicts.ts';

/**
 * flowsync's data folder (the state, the lock, the logs, the embedded service's database with every synced flow):
 * 0700 and its files 0600, and it takes a write. Looked at before anything else opens a file there, since the
 * agent's files are taken to those modes when they are opened.
 */
export function dataFolderCheck(folder = dirname(defaultStatePath())): DoctorCheck {
  const shown = tilde(folder);
  if (!existsSync(folder))
    return passed('data-folder', `data folder: ${shown} is not made yet (the first start makes it, 0700)`);
  const loose = looseModes(folder);
  if (loose.length > 0) {
    const named = loose.map(({ path, mode }) => `${path === folder ? shown : basename(path)} ${octal(mode)}`);
    const chmod = (expected: number) => {
      const paths = loose.filter((entry) => entry.expected === expected).map(({ path }) => tilde(path));
      return paths.length === 0 ? [] : [`chmod ${octal(expected)} ${paths.join(' ')}`];
    };
    return failure(
      'data-folder',
      `data folder: ${named.join(', ')}: other users of this machine can read your synced flows ` +
        '(0700 for folders and 0600 for files expected)',
      `${[...chmod(0o700), ...chmod(0o600)].join(' && ')} (the next \`flowsync start\` does it too)`,
    );
  }
  const fault = folderFault(folder);
  if (fault !== null)
    return failure(
      'data-folder',
      `data folder: ${describeStorageFault(fault, shown)}: the agent cannot record what it sent, so nothing syncs`,
      storageFaultRemedy(fault),
    );
  return passed('data-folder', `data folder: ${shown} is private (0700) and takes writes`);
}

function octal(mode: number): string {
  return `0${mode.toString(8)}`;
}
