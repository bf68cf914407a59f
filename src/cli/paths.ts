import envPaths from 'env-paths';
import { join } from 'node:path';

/** The OS folders flowsync uses (XDG on Linux, ~/Library on macOS, %APPDATA% on Windows). */
const paths = envPaths('flowsync', { suffix: '' });

export const DEFAULT_SERVICE_PORT = 7420;

export function defaultServiceDbPath(): string {
  return join(paths.data, 'service.db');
}
