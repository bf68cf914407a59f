import { Help } from 'commander';
import { describe, expect, it } from 'vitest';
import { COMMANDS } from '../../src/cli/index.ts';

describe('the flowsync command', () => {
  it('lists each command as the command itself describes its arguments', async () => {
    for (const entry of COMMANDS) {
      const command = await entry.load();
      expect(`${entry.name} ${entry.usage}`).toBe(new Help().subcommandTerm(command));
    }
  });
});
