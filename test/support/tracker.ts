import { expect } from 'vitest';
import { sha256 } from './flows.ts';
import type { TestService } from './service.ts';

export const API_SECRET = 'lin_api_test0123456789abcdefSECRET';

/** Registers a personal API key the way the service learns of one: an add_activity key-created record. */
export async function registerApiKey(
  svc: TestService,
  secret = API_SECRET,
  userId = 'user-1',
): Promise<void> {
  const reply = await svc.call('svc/swarm_api_key/private/add_activity', {
    api_key_tid: `tid-${userId}`,
    ts: Date.now(),
    payload: {
      type: 'key-created',
      hash: sha256(secret),
      name: 'test key',
      prefix_4: secret.slice(0, 4),
      suffix_4: secret.slice(-4),
      user_id: userId,
    },
  });
  expect(reply.statusCode).toBe(200);
}

export function apiKey(secret = API_SECRET) {
  return { secret, type: 'personal-api-key' };
}

export interface IssueFields {
  id: string;
  identifier: string;
  title: string;
  description?: string | null;
  priority?: number;
  state?: { name: string };
  teamId?: string;
  parentId?: string | null;
  archivedAt?: string | null;
}

/** Delivers one webhook body through store_webhook and expects it to be stored. */
export async function deliver(
  svc: TestService,
  body: { action: string; type: string; data: Record<string, unknown> },
  team = 'team-eng',
) {
  const reply = await svc.call('wh/tracker/private/store_webhook', {
    payload: body,
    team,
    status: 'received',
  });
  expect(reply.statusCode, JSON.stringify(reply.body)).toBe(200);
  return reply;
}

export function issueCreated(fields: IssueFields) {
  return { action: 'create', type: 'Issue', data: { teamId: 'team-eng', ...fields } };
}
