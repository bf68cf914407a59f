import { workflowStateTeams, type WorkflowStateCacheValue } from '../../protocol/index.ts';
import { remoteUrl, userEmail } from '../../agent/index.ts';
import { AgentApiError, type AgentApi } from '../contract.ts';
import type { ApiHelpers } from './helpers.ts';

/** Tasks and the tracker: my open tasks, a search, a task opened for a repository, its status and priority. */
export function taskMethods({
  agent,
  repository,
  apiKey,
}: ApiHelpers): Pick<AgentApi, 'myTasks' | 'searchTasks' | 'openTask' | 'updateTask' | 'workflowStates'> {
  return {
    myTasks: async ({ after }) => agent.team.myTasks(await apiKey(), after),

    searchTasks: async ({ query, after, first }) =>
      agent.team.searchIssues({
        api_key: await apiKey(),
        query,
        ...((after !== undefined || first !== undefined) && { pagination: { after, first } }),
      }),

    openTask: async ({ taskKey, root }) => {
      const { identity } = repository(root);
      return agent.team.syncTask({
        task_key: taskKey,
        repo_remote_url: await repoRemoteUrl(identity.root),
        user_email: await requiredUserEmail(identity.root),
      });
    },

    updateTask: async ({ taskKey, status, priority, recursive }) =>
      agent.team.updateTask({ task_key: taskKey, status, priority, recursive }),

    workflowStates: async ({ taskKey, teamId }) => {
      // The first name with states answers; with none, the last one read (the key the user knows, ENG).
      const teams = workflowStateTeams({ task_key: taskKey, team_id: teamId });
      let found: WorkflowStateCacheValue = { team_id: teamId ?? taskKey, states: [], updated_at: null };
      for (const team of teams) {
        found = await agent.team.workflowStates(team);
        if (found.states.length > 0) break;
      }
      return found;
    },
  };
}

/** The origin remote's URL, else the folder's own address: a task is opened for a repository without a remote too. */
async function repoRemoteUrl(root: string): Promise<string> {
  return (await remoteUrl(root)) ?? `file://${root}`;
}

async function requiredUserEmail(root: string): Promise<string> {
  const email = await userEmail(root);
  if (!email) {
    throw new AgentApiError(
      'refused',
      'Opening a task needs your email: run `git config --global user.email you@example.com`.',
    );
  }
  return email;
}
