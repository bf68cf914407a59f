import { closeSync, openSync, renameSync, unlinkSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { engineOnService, type EngineOnService } from '../support/engine.ts';
import { diskTree, eventually, serviceTree, type TestRepo } from '../support/repo.ts';
import type { TestService } from '../support/service.ts';

/**
 * Issue 21: editors save through temporary names, and every gio-style save (GNOME's editors) uploaded its
 * half-written `.goutputstream-*` file before deleting it; emacs' `#draft.yml#` autosaves were sent although the
 * README says `#*#` never is (`#` starts a comment in gitignore syntax). Each sequence below is what the editor
 * does on disk, written slowly enough that the engine looks at every step, with the service polled throughout:
 * a temporary name must never appear there, not even for a moment.
 */
let on: EngineOnService;
let svc: TestService;
let repo: TestRepo;
let seen: Set<string>;
let polling: Promise<void> | null;
let stopPolling = false;

beforeEach(async () => {
  on = await engineOnService({ 'flows/x/main.yaml': 'v: 0\n', 'flows/x/draft.yml': 'draft: 0\n' });
  ({ svc, repo } = on);
  await on.engine().engine.start();
  await eventually(() => expect(stored()).toEqual(diskTree(repo.root)));
  // Every path the service ever holds, from now on.
  seen = new Set();
  stopPolling = false;
  polling = (async () => {
    while (!stopPolling) {
      for (const path of Object.keys(stored())) seen.add(path);
      await sleep(5);
    }
  })();
});

afterEach(async () => {
  stopPolling = true;
  await polling;
  await on.close();
});

const stored = () => serviceTree(svc.read, 'acme', 'app');

/** Writes a file in two parts with a pause between, as a large save does: the engine sees it half-written. */
async function writeSlowly(path: string, content: string): Promise<void> {
  const fd = openSync(join(repo.root, path), 'w');
  writeSync(fd, content.slice(0, 3));
  await sleep(150);
  writeSync(fd, content.slice(3));
  closeSync(fd);
  await sleep(150);
}

/** Each save, then: the service ends with the saved content and never held any other name. */
async function expectSaved(content: string): Promise<void> {
  await eventually(() => expect(stored()['flows/x/main.yaml']).toBe(content));
  await eventually(() => expect(stored()).toEqual(diskTree(repo.root)));
  stopPolling = true;
  await polling;
  expect([...seen].sort()).toEqual(['flows/x/draft.yml', 'flows/x/main.yaml']);
}

describe('editors saving through temporary names', () => {
  it('gio (gedit, GNOME Text Editor): .goutputstream-XXXXXX written, then renamed over', async () => {
    await writeSlowly('flows/x/.goutputstream-J1K2L3', 'v: 1\n');
    renameSync(join(repo.root, 'flows/x/.goutputstream-J1K2L3'), join(repo.root, 'flows/x/main.yaml'));
    await expectSaved('v: 1\n');
  });

  it('JetBrains safe write: name___jb_tmp___ written, the old one moved to name___jb_old___, then removed', async () => {
    await writeSlowly('flows/x/main.yaml___jb_tmp___', 'v: 2\n');
    renameSync(join(repo.root, 'flows/x/main.yaml'), join(repo.root, 'flows/x/main.yaml___jb_old___'));
    await sleep(150);
    renameSync(join(repo.root, 'flows/x/main.yaml___jb_tmp___'), join(repo.root, 'flows/x/main.yaml'));
    await sleep(150);
    unlinkSync(join(repo.root, 'flows/x/main.yaml___jb_old___'));
    await expectSaved('v: 2\n');
  });

  it('VS Code atomic write: name.vsctmp written, then renamed over', async () => {
    await writeSlowly('flows/x/main.yaml.vsctmp', 'v: 3\n');
    renameSync(join(repo.root, 'flows/x/main.yaml.vsctmp'), join(repo.root, 'flows/x/main.yaml'));
    await expectSaved('v: 3\n');
  });

  it("vim: probes the folder with 4913, and emacs' #name# autosave stays until the buffer is saved", async () => {
    await writeSlowly('flows/x/4913', '');
    unlinkSync(join(repo.root, 'flows/x/4913'));
    await writeSlowly('flows/x/#draft.yml#', 'draft: autosaved\n');
    await writeSlowly('flows/x/main.yaml', 'v: 4\n');
    await sleep(300);
    unlinkSync(join(repo.root, 'flows/x/#draft.yml#'));
    await expectSaved('v: 4\n');
  });
});
