/**
 * Exit codes every command keeps: 0 success, 1 remote error, 2 usage, 3 transport, 4 waiting for you (a file in
 * conflict with the service's version, or deletions held): nothing is lost, and nothing is "in sync" either.
 */
export const EXIT = { ok: 0, remote: 1, usage: 2, transport: 3, attention: 4 } as const;
