import { readFileSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * The window reaches the agent only through its read model and commands (`agent.team` for the team's service and
 * the keychain): no file of src/window holds the agent's client or its secret store, so what the window may do
 * with them is what the agent lists, in one place (src/agent/team-calls.ts).
 */
const WINDOW = fileURLToPath(new URL('../../src/window', import.meta.url));

const windowFiles = () =>
  readdirSync(WINDOW, { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.ts'))
    .map((file) => ({
      file: relative(WINDOW, join(WINDOW, file)),
      text: readFileSync(join(WINDOW, file), 'utf8'),
    }));

/** What reaching the agent's insides looks like, each with what it catches. */
const INSIDES: [string, RegExp][] = [
  [
    'its client or secret store read as a property (`agent.client`, `agent.secrets`, `agent.secretsUrl`)',
    /\bagent\.(client|secrets)/,
  ],
  [
    'its client or secret store taken by destructuring (`const { secrets } = agent`)',
    /\{[^{}]*\b(client|secrets|secretsUrl)\b[^{}]*\}\s*=\s*agent\b/,
  ],
];

describe('the window reaches the agent only through its read model and commands', () => {
  it('reads files of src/window (the check below has something to look at)', () => {
    const files = windowFiles().map(({ file }) => file);
    expect(files).toContain('implementation.ts');
    expect(files).toContain(join('api', 'helpers.ts'));
  });

  it.each(INSIDES)('no file of src/window has %s', (_what, pattern) => {
    const found = windowFiles().flatMap(({ file, text }) =>
      text
        .split('\n')
        .flatMap((line, index) => (pattern.test(line) ? [`${file}:${index + 1}: ${line.trim()}`] : [])),
    );
    expect(found).toEqual([]);
  });

  it.each([
    ['a property read', 'const key = await agent.secrets.locate(url, kind);', 0],
    ['the keychain address', 'agent.team.locate(agent.secretsUrl)', 0],
    ['the client', 'return agent.client.members.whoami({});', 0],
    ['destructuring', 'const { secrets, secretsUrl } = agent;', 1],
    ['the commands, which are allowed', "await agent.team.locateSecret('api-key');", null],
  ] as const)('catches %s', (_what, line, caughtBy) => {
    const caught = INSIDES.findIndex(([, pattern]) => pattern.test(line));
    expect(caught === -1 ? null : caught).toBe(caughtBy);
  });
});
