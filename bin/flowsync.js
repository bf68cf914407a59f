#!/usr/bin/env node
// The `flowsync` command. In a checkout it runs the TypeScript sources through tsx (a dev dependency): what you
// edit is what runs, and a forgotten `npm run build` can never leave you on stale code. An installed package has
// no sources (`files` in package.json) and runs the build, dist/bin/flowsync.js, as the desktop app does.
import { existsSync } from 'node:fs';

// npm only warns about `engines`, and on Node 20 better-sqlite3 13 ends the process with a segmentation fault at the
// first database it opens: say it in words instead.
const [major, minor] = process.versions.node.split('.').map(Number);
if (major < 22 || (major === 22 && minor < 12)) {
  process.stderr.write(
    `flowsync: needs Node 24, or 22.12 or newer; this is Node ${process.versions.node}.\n`,
  );
  process.exit(1);
}

const sources = new URL('../src/cli/main.ts', import.meta.url);
const build = new URL('../dist/bin/flowsync.js', import.meta.url);
// scripts/register-tsx.mjs turns tsx's disk cache off (another user could fill it); it fails when tsx is absent.
const tsx = existsSync(sources)
  ? await import('../scripts/register-tsx.mjs').then(() => true).catch(() => false)
  : false;
if (tsx) {
  await import(sources.href);
} else if (existsSync(build)) {
  await import(build.href);
} else {
  process.stderr.write(
    'flowsync: neither tsx nor a build (dist/) is here: run `npm ci`, or `npm run build`.\n',
  );
  process.exit(1);
}
