import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { agentOnService, type AgentOnService } from '../support/agent-process.ts';

/**
 * The agent gives back what a first pass took (issue 50, docs/memory.md). A fixed workload, `flowsync start` on
 * 10,000 files in 100 flows as a user runs it, then its resident memory once at rest. No timing is asserted: the
 * agent is left at rest for 30 s, and only the ceiling is checked. Measured on Node 24.21 (2 cores,
 * 24 GB): 225 MB at rest before issue 50 (hash workers, V8's young generation sized from the machine's memory and
 * never shrunk, malloc's freed blocks kept), 105-109 MB after it. The ceiling is wide of both.
 */
const FLOWS = 100;
const FILES_PER_FLOW = 100;
const CEILING_MB = 170;
const REST_S = 30;

let on: AgentOnService | null = null;

afterEach(async () => {
  await on?.close();
  on = null;
});

function rssMb(pid: number): number {
  return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;
}

describe.runIf(process.platform === 'linux')('the agent at rest after a first pass of 10,000 files', () => {
  it(`holds at most ${CEILING_MB} MB of resident memory`, async () => {
    const files: Record<string, string> = {};
    for (let flow = 0; flow < FLOWS; flow++)
      for (let file = 0; file < FILES_PER_FLOW; file++)
        files[`flows/flow-${flow}/step-${file}.yaml`] =
          `name: step ${file} of flow ${flow}\nrun: echo ${file}\n`;
    on = await agentOnService(files);
    const agent = on.start(on.repo.root);
    await agent.waitFor(/Watching 1 repository/, 240_000);
    // At rest for REST_S: the agent gives its memory back within a look or two of its keeper (5 s each). The
    // code before issue 50 stayed at 225 MB through 40 s of rest in one run, and came down within 90 s in another
    // (V8 collects at rest sometimes, on its own schedule): the rest is fixed, not waited out.
    await sleep(REST_S * 1000);
    expect(Math.round(rssMb(agent.pid))).toBeLessThanOrEqual(CEILING_MB);
  }, 400_000);
});
