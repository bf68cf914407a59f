import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  SPEC_ONLY,
  askCapabilities,
  createClient,
  failureKind,
  reasonOf,
  RemoteError,
  type RemoteClient,
} from '../../src/client/index.ts';
import { fileEntry } from '../support/flows.ts';
import { PLATFORM, startPlatform, type PlatformService } from '../support/platform.ts';

// Issue 37: each answer of the platform's table (platform-wire.md), read by the client's one reader (failureKind):
// the envelope is the truth, the HTTP code a hint.

const FAST_RETRY = { attempts: 2, baseDelayMs: 5, maxDelayMs: 10 };
let platform: PlatformService;
let client: RemoteClient;

beforeEach(async () => {
  platform = await startPlatform();
  client = createClient({ baseUrl: platform.url, auth: { userToken: platform.token }, retry: FAST_RETRY });
});
afterEach(async () => {
  await client.close();
  await platform.close();
});

const batch = (flowPath = 'flows/a') => ({
  repo_owner: 'acme',
  repo_name: 'app',
  flows: [{ flow_path: flowPath, files: [fileEntry('main.yaml', 'steps: []\n')] }],
});
const failed = (promise: Promise<unknown>) =>
  promise.then(
    () => {
      throw new Error('the call succeeded');
    },
    (error: unknown) => error,
  );

describe('the platform: a function answers with HTTP 200 either way', () => {
  it('a success is a success, its counts read whatever way they are written (12.0)', async () => {
    const value = await client.flowDef.syncBatch(batch());
    expect(value).toMatchObject({ files_created: 1, flows_synced: 1, skipped: false });
    expect(platform.tree('acme', 'app')).toEqual({ 'flows/a/main.yaml': 'steps: []\n' });
  });

  it("a function's refusal (200, error envelope, ConvexError data) is refused, in the service's words", async () => {
    platform.refuseFlow = (flowPath) =>
      flowPath === 'flows/locked' ? 'flows/locked is frozen by its owner' : null;
    const error = await failed(client.flowDef.syncBatch(batch('flows/locked')));
    expect(error).toBeInstanceOf(RemoteError);
    expect(failureKind(error)).toBe('refused');
    expect((error as RemoteError).errorMessage).toContain('flows/locked is frozen by its owner');
    expect((error as Error).message).not.toMatch(/gateway/);
  });

  it('an extra field its validator does not know is refused with its ArgumentValidationError', async () => {
    const args = batch();
    const withExtra = {
      ...args,
      flows: [{ ...args.flows[0]!, files: [{ ...args.flows[0]!.files[0]!, base_hash: null }] }],
    };
    const error = await failed(client.flowDef.syncBatch(withExtra));
    expect(failureKind(error)).toBe('refused');
    expect((error as RemoteError).errorMessage).toMatch(/extra field `base_hash`/);
  });

  it('a redacted "[Request ID: …] Server Error" tells nothing: worth waiting for, never a refusal', async () => {
    platform.fault = () => PLATFORM.serverError();
    const error = await failed(client.flowDef.syncBatch(batch()));
    expect(error).toBeInstanceOf(RemoteError);
    expect(failureKind(error)).toBe('server');
  });

  it('an error envelope with neither message nor data says nothing either: worth waiting for', async () => {
    platform.fault = () => ({ status: 200, body: { status: 'error' } });
    const error = await failed(client.flowDef.syncBatch(batch()));
    expect(failureKind(error)).toBe('server');
  });

  it("an error envelope with HTTP 560 is read as the function's answer, as its own client reads it", async () => {
    platform.fault = () => ({
      status: 560,
      body: { status: 'error', errorMessage: 'Flow names must be short' },
    });
    const error = await failed(client.flowDef.syncBatch(batch()));
    expect(failureKind(error)).toBe('refused');
    expect((error as RemoteError).errorMessage).toBe('Flow names must be short');
  });

  it('an unknown function ("Could not find function", 200) is refused, and capabilities then means the spec alone', async () => {
    const error = await failed(client.flowDef.listFlows({ repo_owner: 'acme', repo_name: 'app' }));
    expect(failureKind(error)).toBe('refused');
    expect((error as RemoteError).errorMessage).toMatch(
      /Could not find function for 'svc\/flow_def\/public:list_flows'/,
    );
    expect(await askCapabilities(client)).toEqual(SPEC_ONLY);
  });

  it('in production, where capabilities is answered "Server Error" too, it still means the spec alone', async () => {
    const production = await startPlatform({ production: true });
    const other = createClient({
      baseUrl: production.url,
      auth: { userToken: production.token },
      retry: FAST_RETRY,
    });
    try {
      expect(await askCapabilities(other)).toEqual(SPEC_ONLY);
    } finally {
      await other.close();
      await production.close();
    }
  });
});

describe('the platform: a system error is {code, message} with a non-2xx status', () => {
  it.each([
    ['429 TooManyConcurrentRequests', PLATFORM.tooManyRequests, 'throttled', /Too many concurrent requests/],
    ['503 after its own OCC retries', PLATFORM.occ, 'server', /changed while this mutation was being run/],
    ['408 with an empty body', PLATFORM.timeout, 'unreachable', /408/],
    [
      '401 for an expired token',
      PLATFORM.unauthenticated,
      'unauthorized',
      /Could not verify OIDC token claim/,
    ],
  ] as const)('%s is read for its meaning, its message kept', async (_name, answer, kind, words) => {
    platform.fault = () => answer();
    const error = await failed(client.flowDef.syncBatch(batch()));
    expect(failureKind(error)).toBe(kind);
    expect((error as Error).message).toMatch(words);
  });

  it('capabilities answered 429 is not taken for "the spec alone": it is asked again', async () => {
    platform.fault = () => PLATFORM.tooManyRequests();
    const error = await failed(askCapabilities(client));
    expect(failureKind(error)).toBe('throttled');
  });

  it('a scheme word it does not know is 400 InvalidAdminKey: sign in, not a refusal of the content', async () => {
    platform.fault = () => ({ status: 400, body: { code: 'InvalidAdminKey', message: 'Invalid admin key' } });
    const error = await failed(client.flowDef.syncBatch(batch()));
    expect(failureKind(error)).toBe('unauthorized');
    expect((error as Error).message).toMatch(/Invalid admin key/);
  });

  it('a body over 16 MiB is 400 BadJsonBody: refused as too large', async () => {
    platform.fault = () => ({
      status: 400,
      body: { code: 'BadJsonBody', message: 'Failed to buffer the request body: length limit exceeded' },
    });
    const error = await failed(client.flowDef.syncBatch(batch()));
    expect(failureKind(error)).toBe('refused');
    expect(reasonOf(error)).toBe('body_too_large');
  });
});

describe("the platform's limits, respected before a byte is sent", () => {
  it('an array over 8,192 elements is not sent', async () => {
    const files = Array.from({ length: 8193 }, (_, i) => fileEntry(`f${i}.yaml`, 'x'));
    const error = await failed(
      client.flowDef.syncBatch({
        repo_owner: 'acme',
        repo_name: 'app',
        flows: [{ flow_path: 'flows/a', files }],
      }),
    );
    expect(failureKind(error)).toBe('invalid');
    expect((error as Error).message).toMatch(/8,192/);
    expect(platform.calls).toEqual([]);
  });

  it('a body over 16 MiB is not sent', async () => {
    const big = 'x'.repeat(17 * 1024 * 1024);
    const error = await failed(
      client.flowDef.syncBatch({
        repo_owner: 'acme',
        repo_name: 'app',
        flows: [{ flow_path: 'flows/a', files: [fileEntry('big.yaml', big)] }],
      }),
    );
    expect(failureKind(error)).toBe('invalid');
    expect((error as Error).message).toMatch(/16 MiB/);
    expect(platform.calls).toEqual([]);
  });
});
