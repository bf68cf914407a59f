// Writes test/README.md: every test file, by folder, with the rule it proves, which is the first sentence of its
// own top comment (else its first describe). `npm run test-index` after adding or renaming a test; the test
// test/protocol/test-index.test.ts fails while a test file is missing from the index.
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const TEST = fileURLToPath(new URL('../test/', import.meta.url));

/** Each folder's heading, in the order the index lists them. */
const FOLDERS = [
  ['agent', 'The agent: its configuration, repositories, credentials and errors'],
  ['cli', 'The commands, run as a user runs them (real processes, real services, real git)'],
  ['client', 'The client: what any service may answer, hostile ones included'],
  ['e2e', 'The window in Chromium, end to end'],
  ['electron', 'The desktop shell'],
  ['host', 'The host: files, locks, logs, memory'],
  ['package', 'The npm package and the desktop staging'],
  ['protocol', 'The protocol: schemas, lines and decisions (pure)'],
  ['secrets', 'The keychain'],
  ['service', 'The service: its functions on SQLite and on Postgres'],
  ['support', "The tests' own set-up (a Postgres cluster)"],
  ['sync', 'The sync engine and its rules'],
  ['sync/model', 'The model of a team (fast-check)'],
  ['window', "The window's contract, bridge and policies"],
];

const INTRO = `# The tests

Every test runs against real parts: the service over HTTP on 127.0.0.1, SQLite files, a Postgres cluster the test
makes and removes, the OS keychain in a private D-Bus session, Chromium, chokidar on real files, git repositories,
processes killed with real signals, a second user. \`npm test\` runs them all; \`npm run test:unit\` the pure units
(\`UNIT\` in \`vitest.config.ts\`). Shared set-up lives in \`test/support/\`. This page is written by
\`scripts/test-index.mjs\`.

Each file below with the rule it proves (the first sentence of its own comment, which says more).
`;

/** The test files of a folder (not of its subfolders), by name. */
function testFiles(folder) {
  return readdirSync(join(TEST, folder), { withFileTypes: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.test.ts'))
    .map((entry) => entry.name)
    .sort();
}

/** What a test file proves, in one sentence of its own (at most 200 characters). */
function provesOf(source) {
  // The file's first comment, without the issue it opens with ("Issue 24: …" tells history, not the rule).
  const comments = [...source.matchAll(/\/\*\*([\s\S]*?)\*\//g)].map((match) =>
    match[1]
      .split('\n')
      .map((line) => line.replace(/^\s*\*\s?/, ''))
      .join(' ')
      .replace(/\s+/g, ' ')
      .trim(),
  );
  const described = /describe\((['"`])(.*?)\1/.exec(source)?.[2] ?? '';
  const text = comments[0]?.replace(/^Issue \d+[^:.]*[:.]\s*/, '') || described;
  const sentence = /^(.*?[.!?])(?:\s+(?=[A-Z`"(])|$)/.exec(text)?.[1] ?? text;
  const cut = sentence.length > 200 ? `${sentence.slice(0, 199).trimEnd()}…` : sentence;
  return (cut.charAt(0).toUpperCase() + cut.slice(1)).replaceAll('|', '\\|');
}

function testIndex() {
  const sections = FOLDERS.map(([folder, heading]) => {
    const rows = testFiles(folder).map((name) => {
      const path = `${folder}/${name}`;
      return `| [${name}](${path}) | ${provesOf(readFileSync(join(TEST, path), 'utf8'))} |`;
    });
    return `## ${heading} (\`test/${folder}/\`)\n\n| file | what it proves |\n| --- | --- |\n${rows.join('\n')}\n`;
  });
  return `${INTRO}\n${sections.join('\n')}`;
}

if (process.argv[1] && relative(process.argv[1], fileURLToPath(import.meta.url)) === '') {
  writeFileSync(join(TEST, 'README.md'), testIndex());
}
