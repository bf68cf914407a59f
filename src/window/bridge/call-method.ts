import type { FastifyReply, FastifyRequest } from 'fastify';
import { describeIssues, toWireIssues } from '../../protocol/index.ts';
import {
  AGENT_API,
  AgentApiError,
  replyError,
  replyValue,
  type AgentApi,
  type AgentApiMethod,
} from '../contract.ts';
import { toAgentApiError } from '../implementation.ts';
import { HTTP_STATUS } from './answers.ts';

/** `POST /api/<method>`: the body checked against the method's input schema, the answer against its output. */
export function callMethod(api: AgentApi) {
  return async (request: FastifyRequest, reply: FastifyReply) => {
    const name = (request.params as { method: string }).method;
    if (!Object.hasOwn(AGENT_API, name)) {
      return reply.code(404).send(replyError({ code: 'not_found', message: `No method ${name}.` }));
    }
    const method = name as AgentApiMethod;
    const parsed = AGENT_API[method].input.safeParse(request.body ?? {});
    if (!parsed.success) {
      // In a person's words (which field, what it should be), as the window's forms show them under the field.
      const issues = toWireIssues(parsed.error.issues).map(({ path, message }) => ({ path, message }));
      const error = new AgentApiError('invalid_input', describeIssues(issues, ''), issues);
      return reply.code(400).send(replyError(error));
    }
    try {
      const call = api[method] as (input: unknown) => Promise<unknown>;
      const value = AGENT_API[method].output.parse(await call(parsed.data));
      return replyValue(value);
    } catch (thrown) {
      const error = toAgentApiError(thrown);
      return reply.code(HTTP_STATUS[error.code]).send(replyError(error));
    }
  };
}
