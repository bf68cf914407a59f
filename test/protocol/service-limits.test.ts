import { describe, expect, it } from 'vitest';
import { serviceLimitsLine, specAloneLine, type Capabilities } from '../../src/protocol/index.ts';

const URL = 'https://flows.example.com';
const ours: Capabilities = {
  bases: true,
  history: true,
  retention_days: 30,
  retention_bytes: 1,
  repo_config_bases: true,
};

describe('serviceLimitsLine: what a service cannot protect, said once', () => {
  const rows: [string, Capabilities | null, string | null | RegExp][] = [
    ['not answered yet: nothing said yet', null, null],
    ['flowsync serve: nothing', ours, null],
    [
      'a service of the spec alone: no history, no bases, the last writer wins (files and the repo config)',
      { bases: false, history: false, retention_days: 0, retention_bytes: 0, repo_config_bases: false },
      specAloneLine(URL),
    ],
    [
      'an older flowsync service (bases for files, none for the repo config): its config is last-writer-wins',
      { ...ours, repo_config_bases: undefined },
      /cannot detect overwrites of a repository's config .* the last writer's \.flowsync\/repo-config\.json wins/,
    ],
  ];
  it.each(rows)('%s', (_, capabilities, line) => {
    const said = serviceLimitsLine(URL, capabilities);
    if (line instanceof RegExp) expect(said).toMatch(line);
    else expect(said).toBe(line);
  });
  it("the spec-alone line names the repository's config too", () => {
    expect(specAloneLine(URL)).toContain("or of the repository's config");
  });
});
