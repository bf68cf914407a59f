/**
 * A limit the tests shrink (a log's size, an idle connection's time-out), from the environment: a positive whole
 * number, else the default. Named `FLOWSYNC_…` like the other variables; a user need not set them.
 */
export function tunable(name: string, fallback: number, env: NodeJS.ProcessEnv = process.env): number {
  const value = Number(env[name]);
  return Number.isSafeInteger(value) && value > 0 ? value : fallback;
}
