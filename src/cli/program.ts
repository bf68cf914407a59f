import { Command, CommanderError } from 'commander';
import { functionsCommand } from './commands/functions.ts';
import { serveCommand } from './commands/serve.ts';

/** Exit codes every command keeps: 0 success, 1 remote error, 2 usage, 3 transport. */
export const EXIT = { ok: 0, remote: 1, usage: 2, transport: 3 } as const;

export function buildProgram(): Command {
  const program = new Command('flowsync')
    .description('Keep flow-definition folders in sync with a remote-function service.')
    .version('0.1.0')
    .showHelpAfterError('(run with --help for usage)')
    .exitOverride()
    .configureOutput({ outputError: (text, write) => write(text) });
  for (const command of [serveCommand(), functionsCommand()]) {
    // addCommand does not pass exitOverride and the output settings on: copy them so usage errors exit with 2.
    program.addCommand(command.copyInheritedSettings(program));
  }
  return program;
}

export async function runCli(argv: string[]): Promise<number> {
  const program = buildProgram();
  try {
    await program.parseAsync(argv);
    return EXIT.ok;
  } catch (error) {
    if (error instanceof CommanderError) {
      // --help and --version end through here too, with exit code 0.
      return error.exitCode === 0 ? EXIT.ok : EXIT.usage;
    }
    throw error;
  }
}
