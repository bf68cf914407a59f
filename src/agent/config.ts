import envPaths from 'env-paths';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { z } from 'zod';

/** The address `flowsync serve` listens on by default, and so the one the CLI talks to by default. */
export const DEFAULT_SERVICE_URL = 'http://127.0.0.1:7420';

/**
 * The agent's settings file. Secrets never go in it: tokens and API keys live in the OS keychain.
 * Unknown fields are kept, so that an older flowsync does not erase a newer one's settings.
 */
export const agentConfigSchema = z.looseObject({
  /** The service to sync with; empty means the embedded service. */
  serviceUrl: z.string().default(''),
});
export type AgentConfig = z.infer<typeof agentConfigSchema>;

export function configFilePath(): string {
  return join(envPaths('flowsync', { suffix: '' }).config, 'config.json');
}

export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

export function loadConfig(path = configFilePath()): AgentConfig {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return agentConfigSchema.parse({});
    throw error;
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new ConfigError(`${path} is not valid JSON: fix or delete it.`);
  }
  const parsed = agentConfigSchema.safeParse(json);
  if (!parsed.success) {
    const where = parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ');
    throw new ConfigError(`${path} is not a valid flowsync config (${where}): fix or delete it.`);
  }
  return parsed.data;
}

/** Writes the whole file atomically: a crash leaves the old file or the new one, never half of one. */
export function saveConfig(config: AgentConfig, path = configFilePath()): void {
  const valid = agentConfigSchema.parse(config);
  mkdirSync(dirname(path), { recursive: true });
  const temp = `${path}.${process.pid}.tmp`;
  writeFileSync(temp, `${JSON.stringify(valid, null, 2)}\n`, { mode: 0o600 });
  renameSync(temp, path);
}
