import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startAgentProcess, userEnv, type AgentProcess } from '../support/agent-process.ts';
import { runFlowsync } from '../support/cli.ts';
import { startFaultProxy, type FaultProxy } from '../support/fault-proxy.ts';
import { makeRepo, type TestRepo } from '../support/repo.ts';
import { startTestService, type TestService } from '../support/service.ts';

/**
 * Terminal escape sequences from outside — a service's error message, a file's name in a repository — must reach
 * the terminal as visible text, never as commands: a changed window title (OSC 0), a cleared screen (CSI 2J, also
 * as the one-byte C1 CSI), a bell, a fake line after a newline.
 */
const HOSTILE = '\x1b]0;pwned\x07\x1b[2J\u009b2J\nAll files synced';
/** How it must look once printed: every control character spelled out, on the same line. */
const SHOWN = '\\x1b]0;pwned\\x07\\x1b[2J\\x9b2J\\nAll files synced';
const EVIL_NAME = '\x1b]0;pwned\x07\x1b[2J';
const SHOWN_NAME = '\\x1b]0;pwned\\x07\\x1b[2J';

/** The first C0/C1 control character (ESC, BEL, CSI…) in the text, other than the newline that ends each line. */
function control(text: string): string | null {
  const found = [...text].find((char) => {
    const code = char.charCodeAt(0);
    return (code < 0x20 && char !== '\n') || (code >= 0x7f && code <= 0x9f);
  });
  return found === undefined ? null : `U+${found.charCodeAt(0).toString(16).padStart(4, '0')}`;
}

let svc: TestService;
let proxy: FaultProxy;
let repo: TestRepo;
let env: NodeJS.ProcessEnv;
const agents: AgentProcess[] = [];

beforeEach(async () => {
  svc = await startTestService();
  proxy = await startFaultProxy(svc.url);
  repo = makeRepo({
    'flows/hello/main.yaml': 'hello\n',
    'flows/refused/main.yaml': 'refused\n',
    [`flows/hello/${EVIL_NAME}.png`]: Buffer.from([0x89, 0x50, 0, 0xff]),
  });
  env = userEnv(join(repo.dir, 'home'), { url: proxy.url, tokens: svc.tokens });
  // The service refuses the flow `flows/refused` with the hostile message, and any `repo_config` update.
  proxy.fault = (path, _index, body) => {
    const refuse = (errorData: Record<string, unknown>) => ({
      status: 400,
      body: JSON.stringify({ status: 'error', errorMessage: HOSTILE, errorData }),
    });
    if (path.includes('repo_config')) return refuse({ reason: 'invalid_request' });
    if (!path.includes('sync_batch')) return null;
    const flows = (JSON.parse(body) as { args: { flows: { flow_path: string }[] } }).args.flows;
    const index = flows.findIndex((flow) => flow.flow_path === 'flows/refused');
    return index < 0 ? null : refuse({ reason: 'invalid_request', path: ['flows', index] });
  };
});
afterEach(async () => {
  for (const agent of agents.splice(0)) {
    agent.signal('SIGKILL');
    await agent.exited;
  }
  await proxy.close();
  await svc.close();
  repo.cleanup();
});

describe('escape sequences from outside are shown, not obeyed', () => {
  it('flowsync call: the service message in its one error line; --raw prints JSON with them as \\u escapes', async () => {
    const call = ['call', 'svc/repo_config/public/update', '--args', '{"owner":"acme","name":"app"}'];
    const refused = await runFlowsync(call, { env });
    expect(refused.code).toBe(1);
    expect(control(refused.stderr)).toBeNull();
    expect(refused.stderr).toContain(SHOWN);
    expect(refused.stderr.trim().split('\n')).toHaveLength(1);

    const raw = await runFlowsync([...call, '--raw'], { env });
    expect(control(raw.stdout)).toBeNull();
    // Still the same JSON: a script reads the message as the service sent it.
    expect(JSON.parse(raw.stdout)).toMatchObject({ status: 'error', errorMessage: HOSTILE });
  });

  it('flowsync start and flowsync status: file names and refusal messages, printed and re-printed from the state', async () => {
    const agent = startAgentProcess(['start', repo.root], env);
    agents.push(agent);
    await agent.waitFor(/Watching 1 repository/);
    // While watching, each round is a line that names its files and the service's refusal.
    repo.write(`flows/hello/${EVIL_NAME}.yaml`, 'evil\n');
    repo.write('flows/refused/main.yaml', 'refused again\n');
    repo.write(`flows/hello/${EVIL_NAME}.bin`, Buffer.from([0, 0xff, 0xfe]));
    await agent.waitFor(/refused flows\/refused: /);
    // A name with control characters is one the service refuses (and one the agent never takes from a service).
    await agent.waitFor(/\.yaml not sent: a name the service refuses/);
    await agent.waitFor(/\.bin not sent: a name the service refuses/);

    const status = await runFlowsync(['status'], { env });
    expect(status.code).toBe(0);
    agent.signal('SIGINT');
    expect(await agent.exitWithin()).toBe(0);

    const started = agent.output();
    expect(control(started)).toBeNull();
    expect(started).toContain(`refused flows/refused: ${SHOWN}`);
    expect(started).toContain(`flows/hello/${SHOWN_NAME}.yaml not sent: a name the service refuses`);
    expect(started).toContain(`flows/hello/${SHOWN_NAME}.bin not sent: a name the service refuses`);

    expect(control(status.stdout)).toBeNull();
    expect(status.stdout).toContain(`refused by the service: flows/refused: ${SHOWN}`);
    expect(status.stdout).toContain(`not sent: flows/hello/${SHOWN_NAME}.png: a name the service refuses`);
    const json = await runFlowsync(['status', '--json'], { env });
    expect(control(json.stdout)).toBeNull();
    expect(JSON.stringify(JSON.parse(json.stdout))).toContain('pwned');
  });
});
