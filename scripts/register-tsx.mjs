// Runs the TypeScript sources through tsx, with tsx's disk cache off. Every way a checkout runs the sources comes
// through here: bin/flowsync.js (`flowsync`, `npm start`), electron/main.mjs (`npm run desktop`) and `npm run bench`
// (`node --import ./scripts/register-tsx.mjs`).
//
// tsx keeps compiled modules in `<os.tmpdir()>/tsx-<uid>` and runs whatever it finds there without checking who
// owns the folder. With TMPDIR unset (Linux's default) that is /tmp/tsx-<uid>: another local user can create it
// first, fill it with code, and it runs as you (test/cli/tsx-cache.test.ts). TSX_DISABLE_CACHE (read by tsx when
// it loads, here and in its loader thread, which copies this environment) keeps the cache in memory only. The cost,
// from a checkout only (the installed package runs dist/, no tsx), as whole-process medians on 2 busy cores:
// `flowsync --help` 0.51 s of wall time instead of 0.44 s (10 runs); loading the agent (`start`'s modules) 2.04 s of
// CPU instead of 1.82 s (6 runs). A cache in a private folder would save that, but tsx takes its folder only from
// os.tmpdir(), so it would mean changing TMPDIR under tsx while it loads.
process.env.TSX_DISABLE_CACHE = '1';
const { register } = await import('tsx/esm/api');
register();
