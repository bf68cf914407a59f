import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { appPageUrl, isAppPage } from '../../src/agent/index.ts';

const DIST = join('/opt', 'flow sync', 'resources', 'app.asar', 'renderer', 'dist');
const PAGE = appPageUrl(join(DIST, 'index.html'));
const page = (url: string, top = true) => ({ url, top });

describe('isAppPage: which frame may call the agent over IPC', () => {
  it("accepts the app's own page in the top frame, whatever its fragment", () => {
    expect(PAGE).toBe('file:///opt/flow%20sync/resources/app.asar/renderer/dist/index.html');
    expect(isAppPage(page(PAGE), PAGE)).toBe(true);
    expect(isAppPage(page(`${PAGE}#settings`), PAGE)).toBe(true);
  });

  it.each([
    ['another page next to it', appPageUrl(join(DIST, 'other.html'))],
    ['any other file:// page', 'file:///home/ada/Downloads/evil.html'],
    ['a page whose path only starts like it', `${PAGE}.html`],
    ['the page with a query', `${PAGE}?x=1`],
    ['the page name spelled with an escape', PAGE.replace('index.html', '%69ndex.html')],
    ['the page name in capitals', PAGE.replace('index.html', 'INDEX.html')],
    ['the page on another host', PAGE.replace('file:///', 'file://attacker/')],
    ['a web page', 'https://example.com/index.html'],
    ['the bridge in a browser', 'http://127.0.0.1:8384/#token=abc'],
    ['an empty address', ''],
    ['no address at all', 'not a url'],
  ])('refuses %s', (_what, url) => {
    expect(isAppPage(page(url), PAGE)).toBe(false);
  });

  it('refuses an iframe, even one showing the page, and a frame that is gone', () => {
    expect(isAppPage(page(PAGE, false), PAGE)).toBe(false);
    expect(isAppPage(null, PAGE)).toBe(false);
    expect(isAppPage(undefined, PAGE)).toBe(false);
  });
});
