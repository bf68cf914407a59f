// node:crypto loaded at its first use, not with this module: `flowsync status` loads the module and never uses it,
// and loading node:crypto costs a process 22 million instructions (about 15 ms).
const randomBytes = (size: number) => process.getBuiltinModule('node:crypto').randomBytes(size);

/**
 * The one form of an incident id, for a bug of the agent (agent.log) and of the service (its log) alike: 8 hex
 * digits. A person reads it off a window, a terminal or a 500 answer and searches one log for it, so it is short;
 * it need be unique only within that log (rotated at 5 MiB), where a few incidents at most sit side by side. The
 * service used a UUID (36 characters) and the agent this; an answer's id now looks the same whichever made it.
 */
export const INCIDENT_ID = /^[0-9a-f]{8}$/;

/** A new incident id (INCIDENT_ID): 32 random bits. */
export function newIncidentId(): string {
  return randomBytes(4).toString('hex');
}
