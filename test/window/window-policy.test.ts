import { mkdtempSync, rmSync, symlinkSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { APP_PAGE_URL, appFile, isAppPage } from '../../src/window/index.ts';

const DIST = join('/opt', 'flow sync', 'resources', 'app.asar', 'renderer', 'dist');
const page = (url: string, top = true) => ({ url, top });

describe('isAppPage: which frame may call the agent over IPC', () => {
  it("accepts the app's own page, served from app:// (not file://), in the top frame, whatever its fragment", () => {
    expect(APP_PAGE_URL).toBe('app://flowsync/index.html');
    expect(isAppPage(page(APP_PAGE_URL))).toBe(true);
    expect(isAppPage(page(`${APP_PAGE_URL}#settings`))).toBe(true);
  });

  it.each([
    [
      'the same page from disk (file://, which the desktop app no longer uses)',
      pathToFileURL(join(DIST, 'index.html')).href,
    ],
    ['another page next to it', 'app://flowsync/other.html'],
    ['any file:// page', 'file:///home/ada/Downloads/evil.html'],
    ['the page on another app:// host', 'app://attacker/index.html'],
    ['a page whose path only starts like it', `${APP_PAGE_URL}.html`],
    ['the page with a query', `${APP_PAGE_URL}?x=1`],
    ['the page name spelled with an escape', APP_PAGE_URL.replace('index.html', '%69ndex.html')],
    ['the page name in capitals', APP_PAGE_URL.replace('index.html', 'INDEX.html')],
    ['a web page', 'https://example.com/index.html'],
    ['the bridge in a browser', 'http://w1.localhost:8384/#token=abc'],
    ['an empty address', ''],
    ['no address at all', 'not a url'],
  ])('refuses %s', (_what, url) => {
    expect(isAppPage(page(url))).toBe(false);
  });

  it('refuses an iframe, even one showing the page, and a frame that is gone', () => {
    expect(isAppPage(page(APP_PAGE_URL, false))).toBe(false);
    expect(isAppPage(null)).toBe(false);
    expect(isAppPage(undefined)).toBe(false);
  });
});

describe('appFile: what the app:// protocol serves', () => {
  const dist = mkdtempSync(join(tmpdir(), 'flowsync-app-protocol-'));
  mkdirSync(join(dist, 'assets'));
  writeFileSync(join(dist, 'index.html'), '<!doctype html>');
  writeFileSync(join(dist, 'assets', 'index-abc.js'), '');
  writeFileSync(join(dist, '..', 'secret.txt'), 'outside');
  afterAll(() => {
    rmSync(dist, { recursive: true, force: true });
    rmSync(join(dist, '..', 'secret.txt'), { force: true });
  });

  it("serves the renderer's files, and the page for the bare host", () => {
    expect(appFile(APP_PAGE_URL, dist)).toBe(join(dist, 'index.html'));
    expect(appFile('app://flowsync/assets/index-abc.js', dist)).toBe(join(dist, 'assets', 'index-abc.js'));
    expect(appFile('app://flowsync/', dist)).toBe(join(dist, 'index.html'));
  });

  it.each([
    ['a path out of the folder', 'app://flowsync/../secret.txt'],
    ['a path out of the folder, escaped', 'app://flowsync/%2e%2e/secret.txt'],
    ['a path out of the folder, its slash escaped', 'app://flowsync/assets%2f..%2f..%2fsecret.txt'],
    ['a path out of the folder, backslashes', 'app://flowsync/..%5csecret.txt'],
    ['a NUL byte', 'app://flowsync/index.html%00.js'],
    ['another host', 'app://attacker/index.html'],
    ['a folder', 'app://flowsync/assets'],
    ['another scheme', pathToFileURL(join(dist, 'index.html')).href],
    ['a file that is not there', 'app://flowsync/missing.js'],
    ['not an address', 'app://'],
  ])('serves nothing for %s', (_what, url) => {
    expect(appFile(url, dist)).toBeNull();
  });

  it('serves nothing through a link out of the folder', () => {
    symlinkSync(join(dist, '..', 'secret.txt'), join(dist, 'assets', 'linked.js'));
    expect(appFile('app://flowsync/assets/linked.js', dist)).toBeNull();
  });
});
