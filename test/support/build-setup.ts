import { buildCommand } from './build.ts';

/** vitest's global set-up for the projects that run `flowsync` as a process: its build, once per run. */
export default function setup(): void {
  buildCommand();
}
