import type { RemoteClient } from '../client/index.ts';
import type { SecretKind, SecretStore } from '../secrets/index.ts';
import type { RedeemInviteValue, WorkflowStateCacheValue } from '../protocol/index.ts';
import { keepMemberTokens } from './credentials.ts';
import { claimKey, gitEmails, keyOwnerView, registerKey, trackerUsers } from './key-owner.ts';
import { myOpenTasks } from './my-tasks.ts';

/** What the team's calls need of the agent: read at each call, so that the agent may build them first. */
interface TeamCallsAgent {
  readonly client: RemoteClient;
  readonly secrets: SecretStore;
  readonly secretsUrl: string;
  readonly serviceUrl: string;
  roots(): string[];
}

type PersonalApiKey = { secret: string; type: 'personal-api-key' };
type Tracker = RemoteClient['tracker'];
type Task = RemoteClient['task'];

/**
 * The team's service and this service's secrets as commands: tasks and the tracker, whose key this is, and the
 * tokens and key kept in the keychain. The window asks these of the agent and never holds its client or its
 * secret store, so what it may do with them is what is listed here.
 */
export class TeamCalls {
  constructor(private readonly agent: TeamCallsAgent) {}

  /** A secret of this service (a variable of the environment first, then the keychain), and where it was found. */
  locateSecret(kind: SecretKind): ReturnType<SecretStore['locate']> {
    return this.agent.secrets.locate(this.agent.secretsUrl, kind);
  }

  /** Kept in the keychain; throws KeychainUnavailable when there is none. */
  keepSecret(kind: SecretKind, secret: string): Promise<void> {
    return this.agent.secrets.set(this.agent.secretsUrl, kind, secret);
  }

  forgetSecret(kind: SecretKind): Promise<boolean> {
    return this.agent.secrets.delete(this.agent.secretsUrl, kind);
  }

  /** An invite's token kept: an operator's is also the admin token, as `flowsync login --invite` keeps it. */
  keepJoinTokens(value: Pick<RedeemInviteValue, 'token' | 'role'>): Promise<void> {
    return keepMemberTokens(this.agent.secrets, this.agent.secretsUrl, value);
  }

  /** Who this agent's token is on the team's service. */
  whoami(): ReturnType<RemoteClient['members']['whoami']> {
    return this.agent.client.members.whoami({});
  }

  /** The open tasks assigned to the key's owner, a page from `after` on. */
  myTasks(apiKey: PersonalApiKey, after: string | undefined): ReturnType<typeof myOpenTasks> {
    return myOpenTasks(this.agent.client, apiKey, after);
  }

  searchIssues(input: Parameters<Tracker['searchIssues']>[0]): ReturnType<Tracker['searchIssues']> {
    return this.agent.client.tracker.searchIssues(input);
  }

  syncTask(input: Parameters<Task['syncTask']>[0]): ReturnType<Task['syncTask']> {
    return this.agent.client.task.syncTask(input);
  }

  updateTask(input: Parameters<Task['update']>[0]): ReturnType<Task['update']> {
    return this.agent.client.task.update(input);
  }

  /** The workflow states the service has cached for one team name. */
  workflowStates(team: string): Promise<WorkflowStateCacheValue> {
    return this.agent.client.tracker.workflowStateCacheGetByTeam({ team_id: team });
  }

  /** Whose a key is, by git's emails in every repository the agent knows (key-owner.ts). */
  async claimKey(secret: string): ReturnType<typeof claimKey> {
    return claimKey(this.agent.client, secret, await gitEmails(this.agent.roots()));
  }

  /** The tracker's users; null without an admin token (only an operator may list them). */
  trackerUsers(): ReturnType<typeof trackerUsers> {
    return trackerUsers(this.agent.client);
  }

  registerKey(secret: string, userId: string): Promise<void> {
    return registerKey(this.agent.client, secret, userId);
  }

  /** Whose a key is, as Settings shows it. */
  keyOwner(secret: string): ReturnType<typeof keyOwnerView> {
    return keyOwnerView(this.agent.client, secret, this.agent.serviceUrl, this.agent.roots());
  }
}
