import { RemoteError, failureKind, reasonOf, type FailureKind } from '../client/index.ts';
import { folderOf, storageFaultLine, storageFaultOf } from '../host/index.ts';
import { InvalidServiceUrl, KeychainUnavailable } from '../secrets/index.ts';
import { DatabaseProblem } from '../service/index.ts';
import { NotWritten, VersionNotOfFile } from '../sync/index.ts';
import { AgentApiError, type AgentApiErrorBody } from './api-error.ts';
import { ConfigError } from './config.ts';
import { SecretRefused } from './credentials.ts';
import { NOT_AN_OPERATOR } from './key-owner.ts';
import { RepoConfigFileError } from './repo-config-file.ts';

/**
 * Which way a command ends (the CLI maps these to its exit codes 1, 2 and 3): the service refused, the user's
 * input or setup is wrong, or the service could not be reached.
 */
export type Outcome = 'remote' | 'usage' | 'transport';

/** What an error means to a person, whichever door it comes out of (the CLI, the bridge, the desktop app). */
export interface ClassifiedError {
  outcome: Outcome;
  apiCode: AgentApiErrorBody['code'];
  /** One line that says what happened and what to do. */
  message: string;
  issues?: AgentApiErrorBody['issues'];
  kind: FailureKind | null;
}

type Handler = (error: unknown) => ClassifiedError | null;

const API_OUTCOME: Record<AgentApiErrorBody['code'], Outcome> = {
  invalid_input: 'usage',
  not_found: 'usage',
  refused: 'remote',
  unavailable: 'transport',
  internal: 'remote',
};

const wireIssues = (issues: readonly { path: readonly (string | number)[]; message: string }[]) =>
  issues.map(({ path, message }) => ({ path: [...path], message }));

/**
 * The ordered chain (GitHub Desktop's error handlers are the model): the first handler that knows the error
 * decides. Errors of the service and the network come from the client's one `failureKind`; the agent's own
 * mistakes-of-input follow. Whatever no handler knows is a bug: the caller logs it with an incident id.
 */
const HANDLERS: Handler[] = [
  (error) =>
    error instanceof AgentApiError
      ? {
          outcome: API_OUTCOME[error.code],
          apiCode: error.code,
          message: error.message,
          issues: error.issues,
          kind: null,
        }
      : null,
  (error) =>
    error instanceof ConfigError || error instanceof InvalidServiceUrl || error instanceof VersionNotOfFile
      ? { outcome: 'usage', apiCode: 'invalid_input', message: error.message, kind: null }
      : null,
  // A file the service's copy cannot be written to (a folder on the way that is a link, over the size a file may
  // be): said with why; nothing was written.
  (error) =>
    error instanceof NotWritten
      ? { outcome: 'remote', apiCode: 'refused', message: error.message, kind: null }
      : null,
  (error) =>
    error instanceof RepoConfigFileError
      ? {
          outcome: 'usage',
          apiCode: 'invalid_input',
          message: error.message,
          issues: wireIssues(error.issues),
          kind: null,
        }
      : null,
  // The service's answer to a sign-in, said as it is: exit 1 (the service refused), no function name.
  (error) =>
    error instanceof SecretRefused
      ? { outcome: 'remote', apiCode: 'refused', message: error.message, kind: 'unauthorized' }
      : null,
  // A tracker action with a key the service does not know: what to do, in the user's words (the service's own
  // says "register it with add_activity (type key-created)", which is for whoever writes the protocol).
  (error) =>
    error instanceof RemoteError && error.reason === 'unknown_api_key'
      ? {
          outcome: 'remote',
          apiCode: 'refused',
          message: `The service does not know your personal API key yet: pick who you are in Settings, or ${NOT_AN_OPERATOR}`,
          kind: 'unauthorized',
        }
      : null,
  // `serve --db` names a database that cannot be had: the operator's to fix (or to start), said in one line.
  (error) =>
    error instanceof DatabaseProblem
      ? {
          outcome: error.kind === 'refused' ? 'usage' : 'transport',
          apiCode: error.kind === 'refused' ? 'invalid_input' : 'unavailable',
          message: error.message,
          kind: null,
        }
      : null,
  (error) =>
    error instanceof KeychainUnavailable
      ? { outcome: 'usage', apiCode: 'refused', message: error.message, kind: null }
      : null,
  (error) => {
    // A port to listen on that cannot be had (`serve --port`, `ui --ui-port`): the user's choice, said so.
    const message = listenProblem(error);
    return message ? { outcome: 'usage', apiCode: 'invalid_input', message, kind: null } : null;
  },
  (error) => {
    // A folder flowsync writes to that is full, read-only, not ours or failing: said, never an incident (whose log
    // would be written to the same disk).
    const fault = storageFaultOf(error);
    if (fault === null || failureKind(error) !== null) return null;
    const message = storageFaultLine(fault, folderOf(error) ?? "flowsync's data folder");
    return { outcome: 'usage', apiCode: 'unavailable', message, kind: null };
  },
  (error) => {
    const kind = failureKind(error);
    if (kind === null) return null;
    const message = (error as Error).message;
    switch (kind) {
      case 'unreachable':
      case 'throttled':
      case 'server':
        return { outcome: 'transport', apiCode: 'unavailable', message, kind };
      case 'invalid': {
        const issues = (error as { issues?: { path: (string | number)[]; message: string }[] }).issues;
        return { outcome: 'usage', apiCode: 'invalid_input', message, issues, kind };
      }
      case 'unauthorized':
        // No token at hand is a usage problem (sign in); a token the service refused is its answer.
        return error instanceof RemoteError
          ? { outcome: 'remote', apiCode: 'refused', message: error.errorMessage, kind }
          : { outcome: 'usage', apiCode: 'refused', message, kind };
      case 'refused': {
        const remote = error as RemoteError;
        const issues = Array.isArray(remote.errorData.issues)
          ? wireIssues(remote.errorData.issues as { path: (string | number)[]; message: string }[])
          : undefined;
        return {
          outcome: 'remote',
          apiCode: reasonOf(remote) === 'invalid_request' ? 'invalid_input' : 'refused',
          // The window shows the service's words; the CLI line keeps the function, status and trace id.
          message: remote.errorMessage,
          issues,
          kind,
        };
      }
    }
  },
];

/** What is wrong with an address to listen on, in a line that says what to do; null for any other error. */
function listenProblem(error: unknown): string | null {
  if (typeof error !== 'object' || error === null) return null;
  const { code, syscall, address, port } = error as NodeJS.ErrnoException & {
    address?: string;
    port?: number;
  };
  if (syscall !== 'listen' || address === undefined) return null;
  const where = port === undefined ? address : `${address}:${port}`;
  if (code === 'EADDRINUSE')
    return `${where} is in use by another program (another flowsync serve or agent?): choose another port, or stop it.`;
  if (code === 'EACCES')
    return `${where} needs privileges to listen on (a port under 1024): choose a port from 1024 up.`;
  if (code === 'EADDRNOTAVAIL')
    return `${address} is not an address of this machine: listen on 127.0.0.1 (the default) or one of its own.`;
  return null;
}

/** The classification of an error a person can act on; null for a bug. */
export function classifyError(error: unknown, extra: readonly Handler[] = []): ClassifiedError | null {
  for (const handler of [...extra, ...HANDLERS]) {
    const classified = handler(error);
    if (classified) return classified;
  }
  return null;
}
