import axe from 'axe-core';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Page } from 'playwright-core';

/**
 * The README's pictures of the window and the accessibility check that goes with each. The pictures go to a
 * temporary folder; with FLOWSYNC_UPDATE_IMAGES=1 they replace the README's (docs/images/<name>.png). Written there
 * at every run, they left every test run with a changed tree.
 */
export interface Pictures {
  /** The page as it is now, scrolled to the top, as `<name>.png`. */
  take(page: Page, name: string): Promise<void>;
  /** Removes the temporary folder (the README's is kept). */
  cleanup(): void;
}

export function pictures(prefix: string): Pictures {
  const updating = process.env.FLOWSYNC_UPDATE_IMAGES === '1';
  const folder = updating
    ? fileURLToPath(new URL('../../docs/images/', import.meta.url))
    : `${mkdtempSync(join(tmpdir(), `flowsync-${prefix}-`))}/`;
  return {
    async take(page, name) {
      mkdirSync(folder, { recursive: true });
      await page.evaluate('window.scrollTo(0, 0)');
      writeFileSync(`${folder}${name}.png`, await page.screenshot({ fullPage: false }));
    },
    cleanup() {
      if (!updating) rmSync(folder, { recursive: true, force: true });
    },
  };
}

export interface Violation {
  id: string;
  impact: string | null;
  help: string;
  targets: string[];
}

/**
 * axe-core's serious and critical violations on the page as it is now, in the light theme and in the dark one
 * (each `id` then says which: `color-contrast (dark)`): every screen checked is checked in both (issue 42).
 */
export async function seriousViolations(page: Page): Promise<Violation[]> {
  return (await allViolations(page)).filter((v) => v.impact === 'serious' || v.impact === 'critical');
}

/** Every violation axe-core finds on the page as it is now, light and dark (seriousViolations says why). */
export async function allViolations(page: Page): Promise<Violation[]> {
  const dark = (await page.evaluate(`matchMedia('(prefers-color-scheme: dark)').matches`)) as boolean;
  const found: Violation[] = [];
  try {
    for (const scheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      found.push(...(await axeRun(page)).map((v) => ({ ...v, id: `${v.id} (${scheme})` })));
    }
  } finally {
    await page.emulateMedia({ colorScheme: dark ? 'dark' : 'light' });
  }
  return found;
}

async function axeRun(page: Page): Promise<Violation[]> {
  // Evaluated by the test, not by the page: the page's CSP does not apply.
  await page.evaluate(axe.source);
  // A string, run in the page: the test's own types know no DOM.
  return (await page.evaluate(`axe.run(document).then((results) =>
    results.violations.map((v) => ({
      id: v.id,
      impact: v.impact ?? null,
      help: v.help,
      targets: v.nodes.map((node) => node.target.join(' ')),
    })))`)) as Violation[];
}
