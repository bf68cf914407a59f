import { Command, CommanderError } from 'commander';
import { callCommand } from './commands/call.ts';
import { functionsCommand } from './commands/functions.ts';
import { loginCommand } from './commands/login.ts';
import { logoutCommand } from './commands/logout.ts';
import { serveCommand } from './commands/serve.ts';
import { startCommand, uiCommand } from './commands/start.ts';
import { statusCommand } from './commands/status.ts';
import { syncCommand } from './commands/sync.ts';
import { EXIT } from './exit-codes.ts';

export { EXIT };

export function buildProgram(): Command {
  const program = new Command('flowsync')
    .description('Keep flow-definition folders in sync with a remote-function service.')
    .version('0.1.0')
    .showHelpAfterError('(run with --help for usage)')
    .exitOverride()
    .configureOutput({ outputError: (text, write) => write(text) });
  for (const command of [
    startCommand(),
    syncCommand(),
    statusCommand(),
    uiCommand(),
    serveCommand(),
    loginCommand(),
    logoutCommand(),
    callCommand(),
    functionsCommand(),
  ]) {
    // addCommand does not pass exitOverride and the output settings on: copy them so usage errors exit with 2.
    program.addCommand(command.copyInheritedSettings(program));
  }
  return program;
}

export async function runCli(argv: string[]): Promise<number> {
  const program = buildProgram();
  try {
    await program.parseAsync(argv);
    return typeof process.exitCode === 'number' ? process.exitCode : EXIT.ok;
  } catch (error) {
    if (error instanceof CommanderError) {
      // --help and --version end through here too, with exit code 0.
      return error.exitCode === 0 ? EXIT.ok : EXIT.usage;
    }
    // Loaded only when something failed: `--version` and `--help` stay free of the agent's modules.
    const { reportError } = await import('./report-error.ts');
    return reportError(error);
  }
}
