import { AgentApiError, ConfigError } from '../agent/index.ts';
import {
  InvalidArgsError,
  MissingCredentialsError,
  ProtocolError,
  RemoteError,
  TransportError,
} from '../client/index.ts';
import { KeychainUnavailable } from '../secrets/index.ts';
import { EXIT } from './exit-codes.ts';
import { UsageError } from './usage-error.ts';

/**
 * The exit code for an error a person can act on, after printing it as one line; undefined for anything else,
 * which is a bug and should surface with its stack.
 */
export function reportError(error: unknown): number | undefined {
  const code = exitCodeOf(error);
  if (code !== undefined) process.stderr.write(`flowsync: ${(error as Error).message}\n`);
  return code;
}

function exitCodeOf(error: unknown): number | undefined {
  if (error instanceof RemoteError) return EXIT.remote;
  // A running agent's answer, when a folder was handed to it.
  if (error instanceof AgentApiError) {
    if (error.code === 'unavailable') return EXIT.transport;
    return error.code === 'internal' ? EXIT.remote : EXIT.usage;
  }
  if (error instanceof TransportError || error instanceof ProtocolError) return EXIT.transport;
  if (
    error instanceof UsageError ||
    error instanceof InvalidArgsError ||
    error instanceof MissingCredentialsError ||
    error instanceof KeychainUnavailable ||
    error instanceof ConfigError
  ) {
    return EXIT.usage;
  }
  return undefined;
}
