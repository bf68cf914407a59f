import { createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/*
 * A service of the spec as the platform the spec's API comes from answers it (Convex's HTTP API), built from
 * /work/shared/reference/platform-wire.md (its public docs and open-source backend), not from flowsync's service's
 * rules: a function's failure is HTTP 200 with `{status:"error"}`, an unknown function too ("Could not find
 * function"), a system error is `{code, message}` with a non-2xx status, a body over 16 MiB is 400 `BadJsonBody`,
 * arguments are validated strictly (an extra field is refused) with the platform's value limits. It is not our
 * part, so it keeps its data in memory: only the functions the agent calls on a service of the spec alone store
 * anything (sync_batch, update_file, repo_config update); the others of the 20 answer null.
 */

export interface PlatformAnswer {
  status: number;
  /** A JSON body, or null for none (the 408 of its time-out layer, a 404 for a wrong route). */
  body: unknown;
}

/** What the platform answers in the cases the agent must read (platform-wire.md, section 1). */
export const PLATFORM = {
  /** 1c in production: a plain Error, redacted. */
  serverError: (): PlatformAnswer => ({
    status: 200,
    body: { status: 'error', errorMessage: `[Request ID: ${requestId()}] Server Error` },
  }),
  /** 1i: a query or mutation waited 5 s for a slot; no Retry-After. */
  tooManyRequests: (): PlatformAnswer => ({
    status: 429,
    body: {
      code: 'TooManyConcurrentRequests',
      message:
        'Too many concurrent requests. Your backend is limited to 16 concurrent mutations. To get more resources, upgrade to Convex Pro.',
    },
  }),
  /** 1k: its own retries of an optimistic-concurrency failure ran out; nothing was committed. */
  occ: (): PlatformAnswer => ({
    status: 503,
    body: {
      code: 'OptimisticConcurrencyControlFailure',
      message:
        'Documents read from or written to the "flow_files" table changed while this mutation was being run and on every subsequent retry. See https://docs.convex.dev/error#1',
    },
  }),
  /** 1j: the HTTP server's time-out layer, after 300 s: no body at all. */
  timeout: (): PlatformAnswer => ({ status: 408, body: null }),
  /** 1g: an expired or invalid token. */
  unauthenticated: (): PlatformAnswer => ({
    status: 401,
    body: {
      code: 'Unauthenticated',
      message:
        "Could not verify OIDC token claim. Check that the token signature is valid and the token hasn't expired.",
    },
  }),
} as const;

export interface PlatformService {
  url: string;
  /** The user token it takes (`Bearer <token>`); any other Bearer token is 401. */
  token: string;
  /** `flow_path/path → content` of a repository, as stored. */
  tree(owner: string, name: string): Record<string, string>;
  /** The function path of every request, in order (the extensions included). */
  calls: string[];
  /** Answers a request in the function's place while it returns an answer (the function then does not run). */
  fault: ((fn: string, body: string) => PlatformAnswer | null) | null;
  /** A flow the service refuses: its function throws `ConvexError(<words>)` for a batch that carries it. */
  refuseFlow: ((flowPath: string) => string | null) | null;
  /** An outage: every connection is closed as it comes, no answer given. */
  down: boolean;
  /** Requests and connections closed while down. */
  refusedConnections: number;
  close(): Promise<void>;
}

/** 16 MiB + 2000 bytes: the public API's DefaultBodyLimit (MAX_BACKEND_PUBLIC_API_REQUEST_SIZE). */
const BODY_LIMIT = 16 * 1024 * 1024 + 2000;
const MAX_ARRAY_LEN = 8192;
const MAX_OBJECT_FIELDS = 1024;

type Validator =
  | 'string'
  | 'number'
  | 'boolean'
  | 'any'
  | { array: Validator }
  | { object: Record<string, Validator>; optional?: string[] };

const baggage: Validator = { object: { trace_id: 'string', traffic_type: 'string' } };
const fileEntry: Validator = { object: { content: 'string', hash: 'string', path: 'string' } };
/** The functions' declared args, as the spec gives them (which fields are optional: not shown, so few are). */
const FUNCTIONS: Record<string, { args: Validator; run: (args: Args, store: Store) => unknown }> = {
  'svc/flow_def/action/sync_batch/run': {
    args: {
      object: {
        baggage,
        flows: { array: { object: { flow_path: 'string', files: { array: fileEntry } } } },
        repo_name: 'string',
        repo_owner: 'string',
        delete_missing: 'boolean',
      },
      optional: ['delete_missing'],
    },
    run: syncBatch,
  },
  'svc/flow_def/public/update_file': {
    args: { object: { baggage, content: 'string', fileId: 'string' } },
    run: (args, store) => {
      const file = store.byId.get(args.fileId as string);
      if (!file) throw new ConvexError(`No file with id ${String(args.fileId)}`);
      file.content = args.content as string;
      return { id: args.fileId, hash: sha256(file.content) };
    },
  },
  'crypto/decrypt_aes_gcm/run': {
    args: { object: { baggage, ciphertext: 'string', iv: 'string', key: 'string', tag: 'string' } },
    run: (args) => {
      const bytes = (field: string) => Buffer.from(args[field] as string, 'base64');
      try {
        const decipher = createDecipheriv('aes-256-gcm', bytes('key'), bytes('iv'));
        decipher.setAuthTag(bytes('tag'));
        const plain = Buffer.concat([decipher.update(bytes('ciphertext')), decipher.final()]);
        return { plaintext: plain.toString('utf8'), plaintext_base64: plain.toString('base64') };
      } catch {
        throw new ConvexError('Could not decrypt: wrong key or tag');
      }
    },
  },
  'svc/repo_config/public/update': {
    args: {
      object: {
        baggage,
        name: 'string',
        owner: 'string',
        artifact_config: 'any',
        backend_config: 'any',
        background_jobs: 'any',
        assistant_config: 'any',
        copy_ignored_files: 'any',
        editor: 'string',
        service_config: 'any',
        user: 'string',
      },
      optional: [
        'artifact_config',
        'backend_config',
        'background_jobs',
        'assistant_config',
        'copy_ignored_files',
        'editor',
        'service_config',
        'user',
      ],
    },
    run: () => null,
  },
};

type Args = Record<string, unknown>;
interface Store {
  /** `owner/name` → flow_path → path → file */
  repos: Map<string, Map<string, Map<string, { id: string; content: string }>>>;
  byId: Map<string, { id: string; content: string }>;
  refuseFlow: PlatformService['refuseFlow'];
}

/** What a function throws on purpose: its data reaches the caller as `errorData`, also in production. */
class ConvexError extends Error {}

/** Starts the platform on 127.0.0.1; `production` redacts every message but a ConvexError's data. */
export async function startPlatform(options: { production?: boolean } = {}): Promise<PlatformService> {
  const token = randomBytes(16).toString('hex');
  const store: Store = { repos: new Map(), byId: new Map(), refuseFlow: null };
  const platform: PlatformService = {
    url: '',
    token,
    calls: [],
    fault: null,
    down: false,
    refusedConnections: 0,
    get refuseFlow() {
      return store.refuseFlow;
    },
    set refuseFlow(decide) {
      store.refuseFlow = decide;
    },
    tree: (owner, name) => {
      const tree: Record<string, string> = {};
      for (const [flowPath, files] of store.repos.get(`${owner}/${name}`) ?? [])
        for (const [path, file] of files) tree[`${flowPath}/${path}`] = file.content;
      return Object.fromEntries(Object.entries(tree).sort(([a], [b]) => a.localeCompare(b)));
    },
    close: () =>
      new Promise((done) => {
        server.closeAllConnections();
        server.close(() => done());
      }),
  };
  const server = createServer((req, res) => {
    if (platform.down) {
      platform.refusedConnections++;
      res.socket?.destroy();
      return;
    }
    void answer(req, res).catch(() => res.destroy());
  });
  server.on('connection', (socket) => {
    if (!platform.down) return;
    platform.refusedConnections++;
    socket.destroy();
  });

  async function answer(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const text = await readBody(req);
    const url = new URL(req.url ?? '/', 'http://platform');
    if (req.method !== 'POST' || !url.pathname.startsWith('/api/run/'))
      return send(res, { status: 404, body: null });
    const segments = url.pathname.slice('/api/run/'.length).split('/').map(decodeURIComponent);
    const fn = segments.join('/');
    platform.calls.push(fn);
    // The order of its checks ([api] l.288-356): the body's extractors, the token, the path, then the function.
    if (!/^application\/(.+\+)?json/.test(req.headers['content-type'] ?? ''))
      return send(res, system(400, 'BadJsonBody', 'Expected request with `Content-Type: application/json`'));
    if (text === null)
      return send(
        res,
        system(400, 'BadJsonBody', 'Failed to buffer the request body: length limit exceeded'),
      );
    let body: { args?: unknown };
    try {
      body = JSON.parse(text) as { args?: unknown };
    } catch (error) {
      return send(res, system(400, 'BadJsonBody', `Failed to deserialize the JSON body: ${String(error)}`));
    }
    if (typeof body !== 'object' || body === null || !('args' in body))
      return send(
        res,
        system(400, 'BadJsonBody', 'Failed to deserialize the JSON body: missing field `args`'),
      );
    const auth = authOf(req.headers.authorization, token);
    if (auth) return send(res, auth);
    if (segments.length < 2)
      return send(res, system(400, 'MissingIdentifier', 'Missing function identifier'));
    const fault = platform.fault?.(fn, text);
    if (fault) return send(res, fault);
    const id = requestId();
    const identifier = `${segments.slice(0, -1).join('/')}:${segments.at(-1)}`;
    const spec = FUNCTIONS[fn];
    // The other functions of the spec exist and answer null; flowsync's extensions (and any typo) do not.
    const known = spec ?? (SPEC_PATHS.has(fn) ? { args: 'any' as Validator, run: () => null } : null);
    if (!known)
      return send(
        res,
        failure(id, `Could not find function for '${identifier}'. Did you forget to run \`npx convex dev\`?`),
      );
    const invalid = valueProblem(body.args, ['args']) ?? validate(known.args, body.args, '');
    if (invalid)
      return send(
        res,
        failure(id, invalid.startsWith('Invalid') ? invalid : `ArgumentValidationError: ${invalid}`),
      );
    try {
      const value = known.run(body.args as Args, store);
      return send(res, { status: 200, body: { status: 'success', value } });
    } catch (error) {
      if (error instanceof ConvexError)
        return send(res, {
          status: 200,
          body: {
            status: 'error',
            errorMessage: options.production
              ? `[Request ID: ${id}] Server Error`
              : `[Request ID: ${id}] Server Error\nUncaught ConvexError: ${error.message}\n    at handler (../convex/${segments.slice(0, -1).join('/')}.ts:24:11)`,
            errorData: error.message,
          },
        });
      return send(res, failure(id, `Uncaught Error: ${String(error)}`));
    }
  }

  /** A function's failure: 200 and an error envelope, its words redacted in production. */
  function failure(id: string, words: string): PlatformAnswer {
    const errorMessage = options.production
      ? `[Request ID: ${id}] Server Error`
      : `[Request ID: ${id}] Server Error\n${words}`;
    return { status: 200, body: { status: 'error', errorMessage } };
  }

  await new Promise<void>((ready) => server.listen(0, '127.0.0.1', ready));
  platform.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return platform;
}

/** The spec's 20 paths (test/support does not read the protocol module: the fixture is not built from our rules). */
const SPEC_PATHS = new Set([
  'svc/swarm_api_key/private/add_activity',
  'svc/tracker/action/issues/search/run',
  'svc/tracker/action/projects/list/run',
  'svc/slug/public/log',
  'wh/tracker/private/store_webhook',
  'wh/tracker/private/handle_attachment_update',
  'svc/repo_config/public/update',
  'svc/flow_def/action/sync_batch/run',
  'svc/flow_def/private/sync_internal',
  'svc/task/action/update/run',
  'svc/tracker/private/workflow_state_cache_upsert',
  'svc/tracker/action/issues/batch/run',
  'svc/tracker/action/projects/get/run',
  'svc/task/action/sync_task/run',
  'crypto/decrypt_aes_gcm/run',
  'svc/tracker/private/key_cache_get_by_uuid',
  'svc/tracker/action/users/viewer/run',
  'svc/task/private/get_by_task_key',
  'svc/flow_def/public/update_file',
  'svc/tracker/private/workflow_state_cache_get_by_team',
]);

/** Whether a function is one of the spec's 20. */
export function isSpecFunction(fn: string): boolean {
  return SPEC_PATHS.has(fn);
}

/** sync_batch as the spec names it: upsert by path, delete_missing drops what a flow entry does not list. */
function syncBatch(args: Args, store: Store): unknown {
  const flows = args.flows as {
    flow_path: string;
    files: { content: string; hash: string; path: string }[];
  }[];
  for (const flow of flows) {
    const words = store.refuseFlow?.(flow.flow_path);
    if (words) throw new ConvexError(words);
  }
  const key = `${String(args.repo_owner)}/${String(args.repo_name)}`;
  const repo = store.repos.get(key) ?? new Map<string, Map<string, { id: string; content: string }>>();
  store.repos.set(key, repo);
  let created = 0;
  let updated = 0;
  let deleted = 0;
  for (const flow of flows) {
    const files = repo.get(flow.flow_path) ?? new Map<string, { id: string; content: string }>();
    repo.set(flow.flow_path, files);
    for (const entry of flow.files) {
      const file = files.get(entry.path);
      if (!file) {
        const made = { id: randomBytes(8).toString('hex'), content: entry.content };
        files.set(entry.path, made);
        store.byId.set(made.id, made);
        created++;
      } else if (file.content !== entry.content) {
        file.content = entry.content;
        updated++;
      }
    }
    if (args.delete_missing === true) {
      const listed = new Set(flow.files.map((entry) => entry.path));
      for (const [path, file] of files)
        if (!listed.has(path)) {
          files.delete(path);
          store.byId.delete(file.id);
          deleted++;
        }
    }
  }
  return {
    files_created: created,
    files_deleted: deleted,
    files_updated: updated,
    flows_synced: flows.length,
    skipped: created + updated + deleted === 0,
  };
}

/** A value the platform cannot hold at all ([value]): an array over 8,192, an object over 1,024 fields, a `$` key. */
function valueProblem(value: unknown, path: string[]): string | null {
  if (Array.isArray(value)) {
    if (value.length > MAX_ARRAY_LEN)
      return `Invalid arguments for ${path.join('.')}: Array length is too long (${value.length} > maximum length ${MAX_ARRAY_LEN})`;
    for (const item of value) {
      const problem = valueProblem(item, path);
      if (problem) return problem;
    }
  } else if (typeof value === 'object' && value !== null) {
    const keys = Object.keys(value);
    if (keys.length > MAX_OBJECT_FIELDS)
      return `Invalid arguments: Object has too many fields (${keys.length} > maximum number ${MAX_OBJECT_FIELDS})`;
    for (const key of keys) {
      if (key.startsWith('$') || !/^[\x20-\x7e]+$/.test(key))
        return `Invalid arguments: Field name ${key} is not a valid field name`;
      const problem = valueProblem((value as Args)[key], path);
      if (problem) return problem;
    }
  }
  return null;
}

/** The function's validator, as the platform checks it (crates/common/src/schemas/validator.rs). */
function validate(validator: Validator, value: unknown, path: string): string | null {
  const mismatch = () =>
    `Value does not match validator.\nPath: ${path || '.'}\nValue: ${JSON.stringify(value)?.slice(0, 80)}\nValidator: v.${typeof validator === 'string' ? validator : 'object'}()`;
  if (validator === 'any') return null;
  if (validator === 'string' || validator === 'boolean')
    return typeof value === validator ? null : mismatch();
  if (validator === 'number') return typeof value === 'number' ? null : mismatch();
  if ('array' in validator) {
    if (!Array.isArray(value)) return mismatch();
    for (const [index, item] of value.entries()) {
      const problem = validate(validator.array, item, `${path}[${index}]`);
      if (problem) return problem;
    }
    return null;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return mismatch();
  for (const key of Object.keys(value))
    if (!(key in validator.object))
      return `Object contains extra field \`${key}\` that is not in the validator.\nPath: ${path || '.'}`;
  for (const [key, inner] of Object.entries(validator.object)) {
    const field = (value as Args)[key];
    if (field === undefined) {
      if (validator.optional?.includes(key)) continue;
      return `Object is missing the required field \`${key}\`. Consider wrapping the field validator in \`v.optional(...)\` if this is expected.\nPath: ${path || '.'}`;
    }
    const problem = validate(inner, field, `${path}.${key}`);
    if (problem) return problem;
  }
  return null;
}

/** 401 for a Bearer token it does not take, 400 for a header too short or a scheme word it does not know. */
function authOf(header: string | undefined, token: string): PlatformAnswer | null {
  // No token at all is no error: the function runs without an identity.
  if (header === undefined) return null;
  if (header.length < 7) return system(400, 'InvalidHeaderFailure', 'Authorization header is malformed');
  const [scheme, presented] = [header.slice(0, header.indexOf(' ')), header.slice(header.indexOf(' ') + 1)];
  if (scheme.toLowerCase() === 'bearer') return presented === token ? null : PLATFORM.unauthenticated();
  // The spec's admin scheme word stands for the platform's own; no admin key is ever taken here.
  if (scheme.toLowerCase() === 'admin' || scheme.toLowerCase() === 'convex')
    return system(401, 'BadAdminKey', 'The provided admin key was invalid for this instance');
  return system(400, 'InvalidAdminKey', 'Invalid admin key');
}

function system(status: number, code: string, message: string): PlatformAnswer {
  return { status, body: { code, message } };
}

/**
 * Its JSON: serde_json writes every number of a value as a float, so a whole number comes out as `12.0`
 * (platform-wire.md section 3); the envelope's own fields are strings.
 */
function send(res: ServerResponse, answer: PlatformAnswer): void {
  if (answer.body === null) {
    res.writeHead(answer.status, { 'content-length': '0' });
    res.end();
    return;
  }
  const text = JSON.stringify(answer.body, null, 0).replace(
    /("(?:files_created|files_deleted|files_updated|flows_synced)":)(\d+)(?=[,}])/g,
    '$1$2.0',
  );
  res.writeHead(answer.status, { 'content-type': 'application/json' });
  res.end(text);
}

/** The body, or null past the limit (read to its end all the same, so the caller gets the answer, not a reset). */
async function readBody(req: IncomingMessage): Promise<string | null> {
  const chunks: Buffer[] = [];
  let bytes = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    bytes += chunk.length;
    if (bytes <= BODY_LIMIT) chunks.push(chunk);
  }
  return bytes > BODY_LIMIT ? null : Buffer.concat(chunks).toString('utf8');
}

function requestId(): string {
  return randomBytes(8).toString('hex');
}

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}
