#!/usr/bin/env node
// The `flowsync` command. An installed package has no sources (`files` in package.json) and runs the build,
// dist/bin/flowsync.js, as the desktop app does. A checkout runs the build too while it is current (`npm ci` makes
// it: `prepare`), and the TypeScript sources through tsx once a source is newer than it: what you edit is what
// runs, and a forgotten `npm run build` never leaves you on stale code. From the build `flowsync status` costs
// 0.1 s of CPU; through tsx 2.4-3.3 s (issue 42; bench/cli.ts), so running the sources says so, once per edit.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

// npm only warns about `engines`, and on Node 20 better-sqlite3 13 ends the process with a segmentation fault at the
// first database it opens: say it in words instead.
const [major, minor] = process.versions.node.split('.').map(Number);
if (major < 22 || (major === 22 && minor < 12)) {
  process.stderr.write(
    `flowsync: needs Node 24, or 22.12 or newer; this is Node ${process.versions.node}.\n`,
  );
  process.exit(1);
}

const root = new URL('..', import.meta.url);
const sources = new URL('src/cli/main.ts', root);
const build = new URL('dist/bin/flowsync.js', root);

/** Why this checkout runs its sources (null: the build is current, or there are no sources). */
async function whyFromSources() {
  if (!existsSync(sources)) return null;
  // Asked for (a test of this launcher, or a developer who wants the sources whatever the build): not said.
  if (process.env.FLOWSYNC_FROM_SOURCES === '1') return '';
  try {
    const { staleBuild } = await import('../scripts/build-stamp.mjs');
    return staleBuild(fileURLToPath(root));
  } catch (error) {
    return `the build could not be checked (${error.message})`;
  }
}

/**
 * The line that says why a command is slow, once for each reason (a file beside the stamp remembers the last one
 * said, and the next build removes it): a developer who edits all day is told when a build is due, not at every
 * command.
 */
function sayOnce(why) {
  if (why === '') return;
  const said = new URL('dist/bin/.from-sources-said', root);
  try {
    if (readFileSync(said, 'utf8') === why) return;
  } catch {
    // not said yet
  }
  process.stderr.write(
    `flowsync: running the TypeScript sources through tsx, which compiles them at every start (slower): ${why}; \`npm run build\` makes it fast again.\n`,
  );
  try {
    writeFileSync(said, why);
  } catch {
    // No dist/ folder (or not writable): said at every command then, which is right until there is a build.
  }
}

const why = await whyFromSources();
// scripts/register-tsx.mjs turns tsx's disk cache off (another user could fill it); it fails when tsx is absent.
const tsx = why !== null && (await import('../scripts/register-tsx.mjs').then(() => true).catch(() => false));
if (tsx) {
  sayOnce(why);
  await import(sources.href);
} else if (existsSync(build)) {
  await import(build.href);
} else {
  process.stderr.write(
    'flowsync: neither tsx nor a build (dist/) is here: run `npm ci`, or `npm run build`.\n',
  );
  process.exit(1);
}
