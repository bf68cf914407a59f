/**
 * A well-formed call that the function refuses (HTTP 422): an unknown id, a hash that does not match, a path that
 * escapes its folder. The message is shown to the caller as is, so it must never contain a secret.
 */
export class CallRefused extends Error {
  readonly data: Record<string, unknown>;
  constructor(message: string, data: Record<string, unknown> = {}) {
    super(message);
    this.name = 'CallRefused';
    this.data = data;
  }
}

/** A tracker action presented a personal API key the service does not know (HTTP 401). */
export class UnknownApiKey extends Error {
  constructor() {
    super('The personal API key is not registered: register it with add_activity (type key-created) first.');
    this.name = 'UnknownApiKey';
  }
}
