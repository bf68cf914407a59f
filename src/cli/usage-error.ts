/** A mistake in how a command was used (bad --args JSON, a missing value): exit code 2, one line. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}
