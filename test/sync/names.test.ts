import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { describeFileWarning } from '../../src/protocol/index.ts';
import { startEngine, type EngineHarness } from '../support/engine.ts';
import { eventually, makeRepo, serviceTree, type TestRepo } from '../support/repo.ts';
import { startTestService, type TestService } from '../support/service.ts';

/**
 * Issue 20, finding 11b: a name that is not valid UTF-8 (a Latin-1 `café.yaml` from an old archive) was skipped
 * with no word: Node's strings replace its bytes, and the replaced name is not on disk. It is listed as not sent,
 * with the reason, like every other file the agent does not send.
 */
let svc: TestService;
let repo: TestRepo;
let harness: EngineHarness | null = null;

beforeEach(async () => {
  svc = await startTestService();
});
afterEach(async () => {
  await harness?.close();
  harness = null;
  repo?.cleanup();
  await svc.close();
});

/** `name` in Latin-1 bytes: é is the single byte 0xE9, which is not UTF-8. */
const latin1 = (folder: string, name: string) =>
  Buffer.concat([Buffer.from(`${folder}/`), Buffer.from(name, 'latin1')]);

describe('names that are not UTF-8', () => {
  it('are listed as not sent with their reason, at the start and when they appear while watching', async () => {
    // U+FFFD written as UTF-8 is a name like any other, beside names that are not UTF-8 and in a folder without
    // them: the scan lists names as text and only a folder where some name has that character again as bytes.
    repo = makeRepo({
      'flows/n/main.yaml': 'main\n',
      'flows/n/kept\uFFFD.yaml': 'kept\n',
      'flows/u/odd\uFFFD.yaml': 'odd\n',
    });
    writeFileSync(latin1(join(repo.root, 'flows/n'), 'café.yaml'), 'café\n');
    mkdirSync(latin1(join(repo.root, 'flows/n'), 'données'));
    writeFileSync(
      Buffer.concat([latin1(join(repo.root, 'flows/n'), 'données'), Buffer.from('/x.yaml')]),
      'x\n',
    );
    harness = startEngine(repo, svc.url, svc.tokens.user);
    const { engine, state } = harness;
    await engine.start();

    expect(serviceTree(svc.read, 'acme', 'app')).toEqual({
      'flows/n/main.yaml': 'main\n',
      'flows/n/kept\uFFFD.yaml': 'kept\n',
      'flows/u/odd\uFFFD.yaml': 'odd\n',
    });
    expect(state.warnings(engine.repoId)).toEqual([
      { flowPath: 'flows/n', path: 'caf\uFFFD.yaml', warning: 'non-utf8-name' },
      { flowPath: 'flows/n', path: 'donn\uFFFDes', warning: 'non-utf8-name' },
    ]);
    expect(describeFileWarning('non-utf8-name')).toBe('a name that is not UTF-8: rename it');

    writeFileSync(latin1(join(repo.root, 'flows/n'), 'élan.yaml'), 'élan\n');
    await eventually(() =>
      expect(state.warnings(engine.repoId)).toContainEqual({
        flowPath: 'flows/n',
        path: '\uFFFDlan.yaml',
        warning: 'non-utf8-name',
      }),
    );
    expect(serviceTree(svc.read, 'acme', 'app')).toEqual({
      'flows/n/main.yaml': 'main\n',
      'flows/n/kept\uFFFD.yaml': 'kept\n',
      'flows/u/odd\uFFFD.yaml': 'odd\n',
    });
  });
});
