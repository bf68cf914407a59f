// The texts live in the agent, which the window shares; the CLI's commands keep importing them from here.
export { describeWarning } from '../agent/index.ts';
