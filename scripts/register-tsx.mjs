// Runs the TypeScript sources through tsx, with tsx's disk cache off. Every way a checkout runs the sources comes
// through here: bin/flowsync.js (`flowsync`, `npm start`), electron/main.mjs (`npm run desktop`) and `npm run bench`
// (`node --import ./scripts/register-tsx.mjs`).
//
// tsx keeps compiled modules in `<os.tmpdir()>/tsx-<uid>` and runs whatever it finds there without checking who
// owns the folder. With TMPDIR unset (Linux's default) that is /tmp/tsx-<uid>: another local user can create it
// first, fill it with code, and it runs as you (test/cli/tsx-cache.test.ts). TSX_DISABLE_CACHE (read by tsx when
// it loads, here and in its loader thread, which copies this environment) keeps the cache in memory only. The cost,
// measured on `flowsync --help` from a checkout (10 runs, median wall time, 2 busy cores): 0.508 s without the
// cache, 0.437 s with it, some 70 ms a command; only a checkout pays it, the installed package runs dist/ and no tsx.
process.env.TSX_DISABLE_CACHE = '1';
const { register } = await import('tsx/esm/api');
register();
