import { readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { z } from 'zod';
import { ensurePrivateFolder, replaceFile } from '../../host/index.ts';

/**
 * What the window keeps across the agent's runs, so that an open tab reconnects after a restart: the port its
 * address was on, and the sessions it gave, each as the SHA-256 of the credential (never
 * the credential) with an expiry. One file, 0600 in the 0700 data folder (`window.json`), read at start and
 * replaced whole at each change.
 */
export interface WindowMemory {
  port: number | null;
  sessions: RememberedSession[];
}

export interface RememberedSession {
  /** Hex SHA-256 of the session credential. */
  digest: string;
  /** Milliseconds since the epoch; the session is refused from then on. */
  expires: number;
}

/**
 * Sessions kept before version 2 were also in each page's localStorage, where a page another user's program served
 * on the window's port (while the agent was stopped) reads them: those are ended, not taken over.
 */
const VERSION = 2;

const memorySchema = z.object({
  version: z.number().catch(0).default(0),
  port: z.number().int().min(1).max(65535).nullable().catch(null),
  sessions: z.array(z.object({ digest: z.string().regex(/^[0-9a-f]{64}$/), expires: z.number() })).catch([]),
});

/**
 * The memory at `path`; an empty one when there is none or it cannot be read (a hand edit, a cut-off write). It
 * holds nothing the agent needs to run: losing it costs the open tabs their sessions and the address its port.
 */
export function readWindowMemory(path: string): WindowMemory {
  try {
    const { version, port, sessions } = memorySchema.parse(JSON.parse(readFileSync(path, 'utf8')));
    return { port, sessions: version === VERSION ? sessions : [] };
  } catch {
    return { port: null, sessions: [] };
  }
}

/** Replaces the memory at `path` (0600; the folder 0700): a crash leaves the old file or the new one. */
export function writeWindowMemory(path: string, memory: WindowMemory): void {
  ensurePrivateFolder(dirname(path));
  replaceFile(path, `${JSON.stringify({ version: VERSION, ...memory })}\n`, 0o600);
}
