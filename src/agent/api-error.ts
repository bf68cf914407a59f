import { z } from 'zod';

/** What a failed call says, on every transport. */
export const agentApiErrorSchema = z.object({
  code: z.enum(['invalid_input', 'not_found', 'refused', 'unavailable', 'internal']),
  message: z.string(),
  issues: z
    .array(z.object({ path: z.array(z.union([z.string(), z.number()])), message: z.string() }))
    .optional(),
});
export type AgentApiErrorBody = z.infer<typeof agentApiErrorSchema>;

/** An error the window's AgentApi answers with; the classifier gives every other error its code. */
export class AgentApiError extends Error {
  override readonly name = 'AgentApiError';
  constructor(
    readonly code: AgentApiErrorBody['code'],
    message: string,
    readonly issues?: AgentApiErrorBody['issues'],
  ) {
    super(message);
  }

  toBody(): AgentApiErrorBody {
    return { code: this.code, message: this.message, ...(this.issues && { issues: this.issues }) };
  }
}
