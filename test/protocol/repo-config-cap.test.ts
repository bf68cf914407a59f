import { describe, expect, it } from 'vitest';
import { repoConfigOverCap } from '../../src/protocol/index.ts';

/** Which repository configs are over the cap a file may be, measured as the file the agent writes (UTF-8 bytes). */
const MIB = 1024 * 1024;
const rows: { description: string; config: unknown; over: boolean }[] = [
  { description: 'a config of a few fields', config: { editor: 'code', user: 'ada' }, over: false },
  {
    description: 'a field of 1 MiB of ASCII: the file is over',
    config: { service_config: 'x'.repeat(MIB) },
    over: true,
  },
  {
    description: 'a field of 1 MiB less 100 characters: the file fits',
    config: { service_config: 'x'.repeat(MIB - 100) },
    over: false,
  },
  {
    description: '600,000 characters of 2 bytes each: under 1 MiB of characters, over in bytes',
    config: { service_config: 'é'.repeat(600_000) },
    over: true,
  },
  {
    description: "a record's owner, name and the service's extras are not in the file: not counted",
    config: { owner: 'acme', name: 'app', written_by: 'x'.repeat(2 * MIB), editor: 'code' },
    over: false,
  },
];

describe('the repository config cap', () => {
  it.each(rows)('$description', ({ config, over }) => {
    expect(repoConfigOverCap(config) !== null).toBe(over);
  });
  it('says the size in KiB and the cap', () => {
    expect(repoConfigOverCap({ service_config: 'x'.repeat(2 * MIB) })).toBe(
      'is 2,049 KiB as a file, over the 1 MiB a file may be',
    );
  });
});
