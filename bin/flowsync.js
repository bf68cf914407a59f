#!/usr/bin/env node
// The `flowsync` command. In a checkout it runs the TypeScript sources through tsx (a dev dependency): what you
// edit is what runs, and a forgotten `npm run build` can never leave you on stale code. An installed package has
// no sources (`files` in package.json) and runs the build, dist/bin/flowsync.js, as the desktop app does.
import { existsSync } from 'node:fs';

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
