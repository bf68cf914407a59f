import { linkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import {
  InvalidArgsError,
  MissingCredentialsError,
  ProtocolError,
  RemoteError,
  TransportError,
} from '../../src/client/index.ts';
import { InvalidServiceUrl, KeychainUnavailable } from '../../src/secrets/index.ts';
import { AgentApiError } from '../../src/agent/api-error.ts';
import { ConfigError } from '../../src/agent/config.ts';
import { classifyError } from '../../src/agent/errors.ts';
import { RepoConfigFileError } from '../../src/agent/repo-config-file.ts';

/**
 * The agent's one error classifier: which way a command ends (the CLI's exit code), what the window's AgentApi
 * answers, and the line a person reads, for every error a person can act on; null for a bug. Each error is built
 * with the class that throws it in use, and the disk's errors are real ones, from Node or from SQLite.
 */
const PATH = 'svc/flow_def/action/sync_batch/run';
const remote = (status: number, errorData: Record<string, unknown> = {}) =>
  new RemoteError(PATH, status, 'the service says no', errorData, 'trace-1');

/** The error a call to Node's fs threw, as it threw it. */
function thrownBy(call: () => unknown): NodeJS.ErrnoException {
  try {
    call();
  } catch (error) {
    return error as NodeJS.ErrnoException;
  }
  throw new Error('expected the call to throw');
}

describe("errors of the agent's own making", () => {
  it.each([
    ['invalid_input', 'usage'],
    ['not_found', 'usage'],
    ['refused', 'remote'],
    ['unavailable', 'transport'],
    ['internal', 'remote'],
  ] as const)('an AgentApiError %s ends as %s, with its code, message and issues', (code, outcome) => {
    const issues = [{ path: ['path'], message: 'give a folder' }];
    expect(classifyError(new AgentApiError(code, 'what happened', issues))).toEqual({
      outcome,
      apiCode: code,
      message: 'what happened',
      issues,
      kind: null,
    });
  });

  it('a bad config value or service address is the user’s input to fix', () => {
    expect(classifyError(new ConfigError('config.json: repositories.0.path: expected a string'))).toEqual({
      outcome: 'usage',
      apiCode: 'invalid_input',
      message: 'config.json: repositories.0.path: expected a string',
      kind: null,
    });
    const url = new InvalidServiceUrl('ftp://flows');
    expect(classifyError(url)).toEqual({
      outcome: 'usage',
      apiCode: 'invalid_input',
      message: url.message,
      kind: null,
    });
  });

  it('a bad .flowsync/repo-config.json names its fields, without the wire codes', () => {
    const error = new RepoConfigFileError('.flowsync/repo-config.json is not valid', [
      { path: ['flow_roots', 0], message: 'expected a string', code: 'invalid_type' },
    ]);
    expect(classifyError(error)).toEqual({
      outcome: 'usage',
      apiCode: 'invalid_input',
      message: '.flowsync/repo-config.json is not valid',
      issues: [{ path: ['flow_roots', 0], message: 'expected a string' }],
      kind: null,
    });
  });

  it('no OS keychain is a refusal the user can work around, said with the variables to set', () => {
    const error = new KeychainUnavailable(new Error('Cannot autolaunch D-Bus without X11 $DISPLAY'));
    expect(classifyError(error)).toEqual({
      outcome: 'usage',
      apiCode: 'refused',
      message: error.message,
      kind: null,
    });
    expect(error.message).toContain('FLOWSYNC_TOKEN');
  });
});

describe("a folder flowsync writes to that cannot take the write (flowsync's own files)", () => {
  it('a full disk, from Node: said in one line with what to do, the data folder named when the error names none', () => {
    const full = thrownBy(() => writeFileSync('/dev/full', 'x'));
    expect(full.code).toBe('ENOSPC');
    expect(classifyError(full)).toEqual({
      outcome: 'usage',
      apiCode: 'unavailable',
      message: "flowsync's data folder is full: free some space on its disk.",
      kind: null,
    });
  });

  it('permission denied, from Node: the folder of the path it names', () => {
    // A hard link to a folder is refused even to root: a real EPERM that names its path, and creates nothing.
    const folder = tmpdir();
    const denied = thrownBy(() => linkSync(folder, join(folder, `flowsync-no-link-${process.pid}`)));
    expect(denied.code).toBe('EPERM');
    expect(classifyError(denied)).toEqual({
      outcome: 'usage',
      apiCode: 'unavailable',
      message: `${dirname(folder)} cannot be written (permission denied): give your user write access to it.`,
      kind: null,
    });
  });

  it.each([
    ['SQLITE_READONLY', 'is read-only: make it writable (remount it read-write)'],
    ['SQLITE_READONLY_DBMOVED', 'is read-only: make it writable (remount it read-write)'],
    ['SQLITE_FULL', 'is full: free some space on its disk'],
    ['SQLITE_IOERR_WRITE', 'cannot be written (a disk error): check the disk'],
    ['SQLITE_CANTOPEN', 'cannot be written (permission denied): give your user write access to it'],
  ])('%s, from SQLite', (code, said) => {
    expect(classifyError(new Database.SqliteError('disk I/O error', code))).toEqual({
      outcome: 'usage',
      apiCode: 'unavailable',
      message: `flowsync's data folder ${said}.`,
      kind: null,
    });
  });
});

describe('errors of a call to the service', () => {
  it.each([
    [
      'no answer',
      () => new TransportError('Cannot reach the service', PATH, 'ECONNREFUSED', 3),
      'unreachable',
    ],
    ['a 408', () => remote(408), 'unreachable'],
    ['a 429', () => remote(429), 'throttled'],
    ['a 503', () => remote(503), 'server'],
    ['a gateway’s 404', () => remote(404), 'server'],
    ['an answer that is not flowsync’s', () => new ProtocolError('not JSON', PATH, 200), 'server'],
  ] as const)('%s: the service could not be reached, try again later', (_name, make, kind) => {
    const error = make();
    expect(classifyError(error)).toEqual({
      outcome: 'transport',
      apiCode: 'unavailable',
      message: error.message,
      kind,
    });
  });

  it('args our own schema refused: nothing was sent, the fields are named', () => {
    const issues = [{ path: ['flows', 0, 'flow_path'], message: 'Too big', code: 'too_big' }];
    const error = new InvalidArgsError(PATH, issues, 'args.flows.0.flow_path: Too big');
    expect(classifyError(error)).toEqual({
      outcome: 'usage',
      apiCode: 'invalid_input',
      message: error.message,
      issues,
      kind: 'invalid',
    });
  });

  it('no token at hand is for the user to sign in; a token the service refused is its answer', () => {
    const missing = new MissingCredentialsError('No user token: run `flowsync login`.');
    expect(classifyError(missing)).toEqual({
      outcome: 'usage',
      apiCode: 'refused',
      message: 'No user token: run `flowsync login`.',
      kind: 'unauthorized',
    });
    for (const status of [401, 403]) {
      expect(classifyError(remote(status, { reason: 'forbidden' }))).toEqual({
        outcome: 'remote',
        apiCode: 'refused',
        message: 'the service says no',
        kind: 'unauthorized',
      });
    }
  });

  it("a member's role that does not allow the function is a refusal in the service's words, not a sign-in", () => {
    const error = remote(403, { reason: 'forbidden', needed: 'write', role: 'read', member: 'carol' });
    expect(classifyError(error)).toEqual({
      outcome: 'remote',
      apiCode: 'refused',
      message: 'the service says no',
      kind: 'refused',
    });
  });

  it('a refusal: the service’s words, its issues without the wire codes, invalid input only for a 400', () => {
    const issues = [{ path: ['flows', 2, 'path'], message: 'a path outside the flow', code: 'custom' }];
    expect(classifyError(remote(400, { reason: 'invalid_request', issues }))).toEqual({
      outcome: 'remote',
      apiCode: 'invalid_input',
      message: 'the service says no',
      issues: [{ path: ['flows', 2, 'path'], message: 'a path outside the flow' }],
      kind: 'refused',
    });
    for (const status of [413, 422]) {
      expect(classifyError(remote(status))).toEqual({
        outcome: 'remote',
        apiCode: 'refused',
        message: 'the service says no',
        issues: undefined,
        kind: 'refused',
      });
    }
  });
});

describe('the order of the chain', () => {
  it('a network error whose code names a disk fault is a network error, not a full disk', () => {
    const error = new TransportError('connect EACCES 127.0.0.1:7420', PATH, 'EACCES', 1);
    expect(classifyError(error)).toMatchObject({ outcome: 'transport', kind: 'unreachable' });
  });

  it("a caller's own handlers come first", () => {
    const error = new ConfigError('bad');
    const classified = classifyError(error, [
      (e) => (e === error ? { outcome: 'remote', apiCode: 'internal', message: 'mine', kind: null } : null),
    ]);
    expect(classified).toEqual({ outcome: 'remote', apiCode: 'internal', message: 'mine', kind: null });
    // A handler that does not know the error leaves it to the chain.
    expect(classifyError(error, [() => null])).toMatchObject({ outcome: 'usage', message: 'bad' });
  });
});

describe('an error no handler knows', () => {
  it.each([
    ['an Error', () => new Error('undefined is not a function')],
    ['a TypeError', () => new TypeError("Cannot read properties of undefined (reading 'root')")],
    ['a Node error that is not about writing', () => thrownBy(() => writeFileSync('/nonexistent/x', 'x'))],
    ['a thrown string', () => 'oops'],
    ['null', () => null],
    ['undefined', () => undefined],
  ])('%s is a bug: null, for the caller to log with an incident id', (_name, make) => {
    expect(classifyError(make())).toBeNull();
  });
});
