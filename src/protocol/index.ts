// Owns the wire: the 20 functions (and the extensions) as data: zod schemas of args and values, the envelope, the
// function table, limits and the words for them. May import: nothing of ours, and no Node API (the renderer imports it).
export * from './common.ts';
export * from './envelope.ts';
export * from './limits.ts';
export * from './paths.ts';
export * from './flow-def.ts';
export { flowHashInput } from './flow-hash.ts';
export * from './repo-config.ts';
export * from './tracker.ts';
export * from './task.ts';
export * from './logs.ts';
export * from './crypto.ts';
export * from './history.ts';
export * from './live.ts';
export * from './members.ts';
export * from './service-limits.ts';
export * from './functions.ts';
export * from './describe.ts';
export * from './file-warnings.ts';
export * from './folder-gone.ts';
export * from './printable.ts';
export * from './plural.ts';
export * from './doctor.ts';
export * from './needs-you.ts';
export * from './in-sync.ts';
export * from './sync-phase.ts';
export * from './here-side.ts';
export * from './incoming.ts';
