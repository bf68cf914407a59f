import type { FastifyReply } from 'fastify';
import { replyError, type AgentApiError } from '../contract.ts';

/** The HTTP status of each AgentApi error code, on every route of the bridge. */
export const HTTP_STATUS: Record<AgentApiError['code'], number> = {
  invalid_input: 400,
  not_found: 404,
  refused: 422,
  unavailable: 503,
  internal: 500,
};

export const ANOTHER_USERS = "This window is another user's: open your own with `flowsync ui --open`.";

/** A refused request's connection is closed with its answer: it keeps no slot for a next try. */
export function refuse(reply: FastifyReply, status: number, message: string) {
  return reply
    .code(status)
    .header('connection', 'close')
    .send(replyError({ code: 'refused', message }));
}
