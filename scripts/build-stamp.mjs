// Whether dist/ holds a build of the sources as they are now: bin/flowsync.js runs the build when it does (0.1 s of
// CPU for `flowsync status`) and the sources through tsx only when it does not (2.4-3.3 s: issue 42). Plain
// JavaScript, as bin/flowsync.js and scripts/build.mjs are: nothing is compiled before it runs.
//
// The build (scripts/build.mjs) leaves a stamp, dist/bin/.built, whose modification time is the moment the build
// started: a source saved after that moment, even during the build, is newer than the stamp. The check stats every
// file under src/ (208 files: 2-5 ms of CPU, measured on the two-core machine) rather than trusting folder times,
// which change when a file is added or removed but not when one is edited.
import { readdirSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';

/** The stamp a build leaves in its bin folder. */
export const STAMP_NAME = '.built';

/** What the CLI's build is made of: the sources, how they are bundled, and the dependencies bundled in (zod). */
const SOURCES = ['src', 'scripts/build.mjs', 'package-lock.json'];

/** The stamp of a build into `binFolder`, dated when the build started (`startedMs`). */
export function writeStamp(binFolder, startedMs) {
  const stamp = join(binFolder, STAMP_NAME);
  writeFileSync(stamp, 'Built from the sources as they were at this file’s modification time.\n');
  utimesSync(stamp, startedMs / 1000, startedMs / 1000);
}

/**
 * Why the checkout at `root` must run its sources instead of dist/ (one phrase: "src/cli/main.ts is newer than the
 * build"), or null when the build is current. Throws when a folder cannot be read: bin/flowsync.js then runs the
 * sources, which say what is wrong.
 */
export function staleBuild(root) {
  const built = statSync(join(root, 'dist/bin', STAMP_NAME), { throwIfNoEntry: false })?.mtimeMs;
  if (built === undefined) return 'there is no build (dist/)';
  const newest = newestSource(root, SOURCES);
  if (newest.path !== null && newest.mtimeMs > built)
    return `${relative(root, newest.path)} is newer than the build (dist/)`;
  return null;
}

/** The most recently modified file among `entries` (files, or folders read recursively) under `root`. */
export function newestSource(root, entries) {
  let newest = { path: null, mtimeMs: 0 };
  const visit = (path) => {
    const stats = statSync(path, { throwIfNoEntry: false });
    if (!stats) return;
    if (stats.isDirectory()) {
      for (const name of readdirSync(path)) {
        if (name !== 'node_modules' && name !== 'dist') visit(join(path, name));
      }
    } else if (stats.mtimeMs > newest.mtimeMs) newest = { path, mtimeMs: stats.mtimeMs };
  };
  for (const entry of entries) visit(join(root, entry));
  return newest;
}
