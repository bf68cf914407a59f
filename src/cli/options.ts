import { InvalidArgumentError, Option } from 'commander';
import { defaultServiceDbPath } from '../host/index.ts';

/** A port option: commander reports a bad one as a usage error (exit 2) naming the option. */
export function parsePort(value: string): number {
  const port = Number(value);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new InvalidArgumentError('a port is a whole number from 0 to 65535 (0 = any free port).');
  }
  return port;
}

/** A whole number of at least `min` (days, MiB…): commander reports a bad one as a usage error naming the option. */
export function parseWholeNumber(min: number): (value: string) => number {
  return (value) => {
    const number = Number(value);
    if (!Number.isSafeInteger(number) || number < min) {
      throw new InvalidArgumentError(`give a whole number of at least ${min}.`);
    }
    return number;
  };
}

/**
 * The service's database, as `serve` and `service export|import` take it: a SQLite file or a Postgres URL, from
 * FLOWSYNC_DB when set, else the default file. One option, so the commands never disagree on which database is meant.
 */
export function databaseOption(description: string): Option {
  return new Option('--db <file or url>', description).env('FLOWSYNC_DB').default(defaultServiceDbPath());
}
