import { RemoteError } from '../client/index.ts';
import { reportIncident } from '../host/index.ts';
import { classifyError, type Agent } from '../agent/index.ts';
import { AgentApiError, type AgentApi } from './contract.ts';
import { apiHelpers } from './api/helpers.ts';
import { statusMethods } from './api/status.ts';
import { repositoryMethods } from './api/repositories.ts';
import { conflictMethods } from './api/conflicts.ts';
import { historyMethods } from './api/history.ts';
import { deletionMethods } from './api/deletions.ts';
import { gitChangeMethods } from './api/git-changes.ts';
import { repoConfigMethods } from './api/repo-config.ts';
import { taskMethods } from './api/tasks.ts';
import { settingsMethods } from './api/settings.ts';
import { trackerKeyMethods } from './api/tracker-key.ts';
import { membershipMethods } from './api/membership.ts';

/**
 * The one implementation of AgentApi, over a running agent. Every transport serves this object. Each slice
 * (`api/*.ts`) is what the user does on one screen or card; a method there forwards to the agent's read model and
 * commands, with the checks every slice shares (api/helpers.ts).
 */
export function createAgentApi(agent: Agent): AgentApi {
  const helpers = apiHelpers(agent);
  return withErrorMapping({
    ...statusMethods(helpers),
    ...repositoryMethods(helpers),
    ...conflictMethods(helpers),
    ...historyMethods(helpers),
    ...deletionMethods(helpers),
    ...gitChangeMethods(helpers),
    ...repoConfigMethods(helpers),
    ...taskMethods(helpers),
    ...settingsMethods(helpers),
    ...trackerKeyMethods(helpers),
    ...membershipMethods(helpers),
  });
}

/** Errors of the parts below become AgentApiErrors with a message a person can act on. */
function withErrorMapping(api: AgentApi): AgentApi {
  const mapped = {} as Record<string, (input: never) => Promise<unknown>>;
  for (const [name, method] of Object.entries(api) as [string, (input: never) => Promise<unknown>][]) {
    mapped[name] = async (input) => {
      try {
        return await method(input);
      } catch (error) {
        throw toAgentApiError(error, name);
      }
    };
  }
  return mapped as AgentApi;
}

/**
 * The AgentApi error for anything thrown below: the one classifier decides; a bug gets an incident id that is in
 * the agent's log, and the answer names the log.
 */
export function toAgentApiError(error: unknown, method?: string): AgentApiError {
  if (error instanceof AgentApiError) return error;
  const classified = classifyError(error);
  if (classified) {
    // The window shows the service's own words, unless the classifier has its own (an unknown API key: what to do,
    // not the protocol's words); the function, status and trace id are for the CLI's line.
    const message =
      error instanceof RemoteError && classified.message === error.message
        ? error.errorMessage
        : classified.message;
    return new AgentApiError(classified.apiCode, message, classified.issues);
  }
  const incident = reportIncident(error, { method });
  return new AgentApiError(
    'internal',
    `Something went wrong in the agent (incident ${incident.id}); ${incident.details}.`,
  );
}
