import type { FastifyReply } from 'fastify';
import { ERROR_REASONS, type Envelope } from '../../protocol/index.ts';

export type ErrorStatus = keyof typeof ERROR_REASONS;

export function sendValue(reply: FastifyReply, value: unknown): FastifyReply {
  const envelope: Envelope = { status: 'success', value };
  return reply.code(200).send(envelope);
}

/** Every error is an envelope with a reason; the message is for people and never carries a secret. */
export function sendError(
  reply: FastifyReply,
  code: ErrorStatus,
  message: string,
  data: Record<string, unknown> = {},
): FastifyReply {
  const envelope: Envelope = {
    status: 'error',
    errorMessage: message,
    errorData: { reason: ERROR_REASONS[code], ...data },
  };
  return reply.code(code).send(envelope);
}
