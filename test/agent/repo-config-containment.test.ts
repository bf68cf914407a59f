import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  RepoConfigFileError,
  readRepoConfigFile,
  repoConfigProblem,
  writeRepoConfigFile,
} from '../../src/agent/index.ts';
import { MAX_FILE_BYTES } from '../../src/protocol/index.ts';
import { makeRepo, type TestRepo } from '../support/repo.ts';

/**
 * A hostile repository points `.flowsync/repo-config.json` (or `.flowsync` itself) somewhere else: the agent must
 * neither read the target (and show or send it) nor write through the link.
 */
let repo: TestRepo;
let outside: string;
beforeEach(() => {
  repo = makeRepo({ 'flows/hello/main.yaml': 'hello\n' });
  outside = join(repo.dir, 'outside');
  mkdirSync(outside);
  writeFileSync(join(outside, 'secret.json'), '{"editor": "SECRET-MARKER-7731"}');
});
afterEach(() => repo.cleanup());

describe('.flowsync/repo-config.json stays inside the repository', () => {
  it('refuses a config file that is a symbolic link, naming why, without its content', () => {
    mkdirSync(join(repo.root, '.flowsync'));
    symlinkSync(join(outside, 'secret.json'), join(repo.root, '.flowsync/repo-config.json'));
    let thrown: unknown = null;
    try {
      readRepoConfigFile(repo.root);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(RepoConfigFileError);
    expect((thrown as Error).message).toContain('symbolic link');
    expect((thrown as Error).message).not.toContain('SECRET-MARKER');
  });

  it('does not read or write through a .flowsync folder that is a link', () => {
    symlinkSync(outside, join(repo.root, '.flowsync'));
    writeFileSync(join(outside, 'repo-config.json'), '{"editor": "SECRET-MARKER-7731"}');
    expect(() => readRepoConfigFile(repo.root)).toThrow(RepoConfigFileError);
    expect(() => writeRepoConfigFile(repo.root, { editor: 'code' })).toThrow(RepoConfigFileError);
    expect(readFileSync(join(outside, 'repo-config.json'), 'utf8')).toContain('SECRET-MARKER');
    expect(existsSync(join(outside, 'repo-config.json.tmp'))).toBe(false);
  });

  it('still reads and writes a plain file', () => {
    expect(readRepoConfigFile(repo.root)).toBeNull();
    writeRepoConfigFile(repo.root, { editor: 'code' });
    expect(readRepoConfigFile(repo.root)).toEqual({ editor: 'code' });
  });

  it('refuses a config file over the limit of every file, in the words every screen uses for it', () => {
    mkdirSync(join(repo.root, '.flowsync'));
    const padding = ' '.repeat(MAX_FILE_BYTES);
    writeFileSync(join(repo.root, '.flowsync/repo-config.json'), `{"editor": "code"}${padding}`);
    expect(() => readRepoConfigFile(repo.root)).toThrow(
      '.flowsync/repo-config.json is over 1 MiB: make it smaller.',
    );
    // At the limit it is read.
    writeFileSync(join(repo.root, '.flowsync/repo-config.json'), `{"editor": "code"}`.padEnd(MAX_FILE_BYTES));
    expect(readRepoConfigFile(repo.root)).toEqual({ editor: 'code' });
  });
});

describe('what `status` and `start` say of a repository-config file (repoConfigProblem)', () => {
  it('names an invalid one in words, and says nothing of a folder that is not there (it crashed `status`)', () => {
    mkdirSync(join(repo.root, '.flowsync'));
    writeFileSync(join(repo.root, '.flowsync/repo-config.json'), '{"editor": 3}');
    expect(repoConfigProblem(repo.root)).toBe(
      '.flowsync/repo-config.json: editor: must be text (it is a number)',
    );
    writeFileSync(join(repo.root, '.flowsync/repo-config.json'), '{"editor": "code"}');
    expect(repoConfigProblem(repo.root)).toBeNull();
    expect(repoConfigProblem(join(repo.dir, 'not-there'))).toBeNull();
  });
});
