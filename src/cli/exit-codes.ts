/** Exit codes every command keeps: 0 success, 1 remote error, 2 usage, 3 transport. */
export const EXIT = { ok: 0, remote: 1, usage: 2, transport: 3 } as const;
