import {
  ConfigError,
  checkRepositoryFolder,
  folderNotThere,
  identifyRepository,
  pauseOf,
  sourceElsewhere,
  tilde,
  type AgentConfig,
  type RepositoryConfig,
} from '../../agent/index.ts';
import { configFilePath } from '../../host/index.ts';
import { plural, type DoctorCheck } from '../../protocol/index.ts';
import { SHARE_OF_USER_WATCHES, surveyFlowRoots, watchLimit } from '../../sync/index.ts';
import { failure, passed, warning, watchesVerdict } from './verdicts.ts';
import { localTime } from '../local-time.ts';

/**
 * Each repository of the config file (its folder there, its flows found, this checkout its repository's source
 * with the service), and the inotify watches all of them need together, counted as the watcher counts them.
 */
export async function repositoryChecks(
  config: AgentConfig,
  service: string,
): Promise<{ watches: DoctorCheck; repositories: DoctorCheck[] }> {
  let needed = 0;
  const repositories: DoctorCheck[] = [];
  for (const configured of config.repositories) {
    const { check, folders } = await repositoryCheck(configured, service);
    repositories.push(check);
    needed += folders;
  }
  return { watches: watchesVerdict(needed, watchLimit(), SHARE_OF_USER_WATCHES), repositories };
}

async function repositoryCheck(
  configured: RepositoryConfig,
  service: string,
): Promise<{ check: DoctorCheck; folders: number }> {
  const folder = configured.path;
  const shown = tilde(folder);
  const remove = `or Remove it in the window if it is gone for good (or delete its entry in ${tilde(configFilePath())})`;
  if (folderNotThere(folder))
    return {
      check: failure(
        'repository',
        `repository: ${shown} is gone, so nothing of it syncs until it is back (nothing is deleted on the service meanwhile)`,
        `put it back (mount its drive, restore the folder), ${remove}`,
        folder,
      ),
      folders: 0,
    };
  let root: string;
  try {
    root = checkRepositoryFolder(folder);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    return {
      check: failure('repository', `repository: ${error.message}`, `fix it, ${remove}`, folder),
      folders: 0,
    };
  }
  const identity = await identifyRepository(root, configured);
  const name = `${identity.owner}/${identity.name} (${shown})`;
  const roots = surveyFlowRoots(root, configured.flowRoots);
  const folders = roots.reduce((sum, survey) => sum + survey.folders, 0);
  const rootNames = roots.map((survey) => `${survey.root}/`).join(', ');
  const flows = roots.reduce((sum, survey) => sum + survey.flows, 0);
  // Paused: still watched (its changes are counted), so its folders count; nothing of it is sent until resumed.
  const pause = pauseOf(configured);
  if (pause)
    return {
      check: warning(
        'repository',
        `repository: ${name} is paused${pause.since ? ` since ${localTime(pause.since)}` : ''}: nothing of it is sent`,
        `\`flowsync resume ${shown}\` (or Resume in the window) when it should sync again`,
        folder,
      ),
      folders,
    };
  if (!roots.some((survey) => survey.present))
    return {
      check: warning(
        'repository',
        `repository: ${name} has no ${rootNames} folder: nothing to sync`,
        "set its flow folders in the window's Settings (flowRoots in the config file)",
        folder,
      ),
      folders,
    };
  if (flows === 0)
    return {
      check: warning(
        'repository',
        `repository: ${name} has no flow in ${rootNames}: nothing to sync`,
        `put each flow in a folder of its own, as ${roots[0]!.root}/<flow>/…`,
        folder,
      ),
      folders,
    };
  const source = sourceElsewhere(identity, service);
  if (source !== null)
    return {
      check: warning(
        'repository',
        `repository: ${name} is not synced: ${identity.owner}/${identity.name} is synced from ${tilde(source)}`,
        `\`flowsync start ${shown} --source\` syncs from this checkout instead (${tilde(source)} then stops)`,
        folder,
      ),
      folders: 0, // not watched: listed, not synced
    };
  return {
    check: passed('repository', `repository: ${name}: ${plural(flows, 'flow')} in ${rootNames}`, folder),
    folders,
  };
}
