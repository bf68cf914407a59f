import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkFlowRoots, checkRepositoryFolder, tooWide } from '../../src/agent/folder-check.ts';

/** The one folder check's two new rules (issue 25, item 3): folders too wide to be a repository, and flow roots. */
let dir: string;
beforeAll(() => {
  dir = realpathSync(mkdtempSync(join(tmpdir(), 'flowsync-folder-check-')));
  mkdirSync(join(dir, 'repo/pipelines'), { recursive: true });
  mkdirSync(join(dir, 'elsewhere'));
  writeFileSync(join(dir, 'repo/README.md'), '# app\n');
  symlinkSync(join(dir, 'elsewhere'), join(dir, 'repo/linked'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('a folder too wide to be a repository', () => {
  const home = realpathSync(homedir());

  it('is /, the home folder (however written), or a folder above it', () => {
    expect(tooWide('/')).toBe('/ is the whole disk, not a repository');
    expect(tooWide('~')).toBe('~ is your home folder, not a repository');
    expect(tooWide(`${home}/`)).toBe(`${home}/ is your home folder, not a repository`);
    if (dirname(home) !== '/')
      expect(tooWide(dirname(home))).toBe(`${dirname(home)} holds your home folder, not a repository`);
  });

  it('is not a folder inside the home, or beside it', () => {
    expect(tooWide('~/code/app')).toBeNull();
    expect(tooWide(join(dir, 'repo'))).toBeNull();
    expect(tooWide(`${home}-backup`)).toBeNull();
  });

  it('is refused by the one folder check, with what to give instead', () => {
    expect(() => checkRepositoryFolder('/')).toThrow(
      '/ is the whole disk, not a repository: give the folder of one repository, e.g. ~/code/app.',
    );
    expect(checkRepositoryFolder(join(dir, 'repo'))).toBe(join(dir, 'repo'));
  });
});

describe("a repository's flow roots as the user sets them", () => {
  const repo = () => join(dir, 'repo');

  it('are kept as the layout keeps them, once each; one not there yet is fine', () => {
    expect(checkFlowRoots(repo(), [' ./pipelines/ ', 'pipelines', 'apps/flows', ''])).toEqual([
      'pipelines',
      'apps/flows',
    ]);
  });

  it.each([
    [
      ['../elsewhere'],
      'The flow folder "../elsewhere" has a .. segment: give a folder inside the repository',
    ],
    [['/etc'], 'The flow folder "/etc" is absolute'],
    [['linked'], 'The flow folder "linked": linked is a link; give a real folder inside the repository.'],
    [['README.md/x'], 'The flow folder "README.md/x": README.md is a file'],
    [['  '], 'Give at least one flow folder, e.g. flows.'],
  ])('%j is refused in one line', (roots, says) => {
    expect(() => checkFlowRoots(repo(), roots)).toThrow(says);
  });
});
