import { Help } from 'commander';
import { describe, expect, it } from 'vitest';
import { COMMANDS } from '../../src/cli/index.ts';

describe('the flowsync command', () => {
  it('lists each command as the command itself describes its arguments', async () => {
    for (const entry of COMMANDS) {
      const command = await entry.load();
      // A command of commands (`service export`) names them in its own usage: commander's term lists neither.
      const term =
        command.commands.length > 0
          ? `${command.name()} ${command.usage()}`
          : new Help().subcommandTerm(command);
      expect(`${entry.name} ${entry.usage}`).toBe(term);
    }
  });
});
