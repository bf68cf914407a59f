import { MAX_JSON_DEPTH } from '../protocol/index.ts';

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

/** A request body nested deeper than MAX_JSON_DEPTH (HTTP 400), found before it is parsed. */
export class NestedTooDeep extends Error {
  readonly statusCode = 400;
  constructor(readonly path: (string | number)[]) {
    super(`The body nests deeper than ${MAX_JSON_DEPTH} levels at ${path.join('.')}: send flatter JSON.`);
    this.name = 'NestedTooDeep';
  }
}

/**
 * The service's database cannot be had: at start (`serve --db`: Postgres unreachable, the user or the database
 * refused, a URL that is not one), or for a call (Postgres went away, the SQLite file's disk is full). A person
 * fixes it, so it is said in one line (never with the URL's password). `unreachable` may pass by itself, `storage`
 * (the disk under the database refuses writes) once someone frees space or mends the disk; `refused` needs a
 * change. A call that meets one is answered 503: send it again later.
 */
export class DatabaseProblem extends Error {
  constructor(
    message: string,
    readonly kind: 'unreachable' | 'refused' | 'storage',
  ) {
    super(message);
    this.name = 'DatabaseProblem';
  }
}

/**
 * A credential the function itself finds wanting (HTTP 401): an invite already used, past its time, or voided.
 * The message says what to do; `data` says why in words a client can test (`invite: 'used'`).
 */
export class CallUnauthenticated extends Error {
  readonly data: Record<string, unknown>;
  constructor(message: string, data: Record<string, unknown> = {}) {
    super(message);
    this.name = 'CallUnauthenticated';
    this.data = data;
  }
}
