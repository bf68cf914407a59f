/** A mistake in what the user gave (a folder, the config file): one line that says what to give instead. */
export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}
