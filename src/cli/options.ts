import { InvalidArgumentError } from 'commander';

/** A port option: commander reports a bad one as a usage error (exit 2) naming the option. */
export function parsePort(value: string): number {
  const port = Number(value);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new InvalidArgumentError('a port is a whole number from 0 to 65535 (0 = any free port).');
  }
  return port;
}
