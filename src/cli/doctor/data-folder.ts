import { existsSync } from 'node:fs';
import { basename, dirname } from 'node:path';
import { inspectConfig, tilde, type AgentConfig } from '../../agent/index.ts';
import {
  configFilePath,
  defaultStatePath,
  describeStorageFault,
  folderFault,
  looseModes,
  storageFaultRemedy,
  type LooseMode,
} from '../../host/index.ts';
import { plural, type DoctorCheck } from '../../protocol/index.ts';
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
    const { named, fix } = describeLoose(folder, loose);
    return failure(
      'data-folder',
      `data folder: ${named}: other users of this machine can read your synced flows ` +
        '(0700 for folders and 0600 for files expected)',
      fix,
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

/**
 * The config file, read as the agent reads it but without its repairs (a file that is not JSON is not moved aside
 * here): what it names, or what is wrong with it; and its folder's modes (0700, the file 0600).
 */
export function configCheck(path = configFilePath()): { check: DoctorCheck; config: AgentConfig } {
  const { config, problem } = inspectConfig(path);
  const shown = tilde(path);
  if (problem !== null)
    return {
      check: failure(
        'config',
        `config: ${problem.replace(path, shown)}`,
        `fix it, or delete it and add your folders again (\`flowsync start <folder>\`)`,
      ),
      config,
    };
  const loose = looseModes(dirname(path));
  if (loose.length > 0) {
    const { named, fix } = describeLoose(dirname(path), loose);
    return {
      check: failure(
        'config',
        `config: ${named}: other users of this machine can read which folders you sync (and change them)`,
        fix,
      ),
      config,
    };
  }
  const service = config.serviceUrl ? config.serviceUrl : 'the embedded service';
  return {
    check: passed(
      'config',
      existsSync(path)
        ? `config: ${shown}: ${plural(config.repositories.length, 'repository', 'repositories')}, ${service}`
        : 'config: no config file yet (`flowsync start <folder>` makes one)',
    ),
    config,
  };
}

/** "~/.local/share/flowsync 0755, state.db 0644" and the chmod lines that fix them. */
function describeLoose(folder: string, loose: readonly LooseMode[]): { named: string; fix: string } {
  const named = loose
    .map(({ path, mode }) => `${path === folder ? tilde(folder) : basename(path)} ${octal(mode)}`)
    .join(', ');
  const chmod = (expected: number) => {
    const paths = loose.filter((entry) => entry.expected === expected).map(({ path }) => tilde(path));
    return paths.length === 0 ? [] : [`chmod ${octal(expected)} ${paths.join(' ')}`];
  };
  return {
    named,
    fix: `${[...chmod(0o700), ...chmod(0o600)].join(' && ')} (the next \`flowsync start\` does it too)`,
  };
}

function octal(mode: number): string {
  return `0${mode.toString(8)}`;
}
