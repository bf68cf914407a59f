import { Command, CommanderError } from 'commander';
import { EXIT } from './exit-codes.ts';

export { EXIT };

interface CommandEntry {
  name: string;
  /** What the command list shows after the name: the command's own arguments (checked by test/cli/program.test.ts). */
  usage: string;
  summary: string;
  load: () => Promise<Command>;
}

/**
 * Every command, and the module that defines it. A module is imported only when its command runs (or shows its
 * own help): `flowsync --version` and `--help` load commander and this file, not fastify, the service, the sync
 * engine, the keychain or SQLite (bench/cli.ts measures it).
 */
export const COMMANDS: readonly CommandEntry[] = [
  {
    name: 'start',
    usage: '[options] [folders...]',
    summary: 'sync repositories and keep them in sync (npm start -- <folder>)',
    load: async () => (await import('./commands/start.ts')).startCommand(),
  },
  {
    name: 'sync',
    usage: '[options] <folders...>',
    summary: 'sync folders once and exit; the exit code says if everything went through',
    load: async () => (await import('./commands/sync.ts')).syncCommand(),
  },
  {
    name: 'conflicts',
    usage: '[options] [folders...]',
    summary: 'list files the service changed since this checkout synced them, and deletions held',
    load: async () => (await import('./commands/conflicts.ts')).conflictsCommand(),
  },
  {
    name: 'resolve',
    usage: '[options] [paths...]',
    summary:
      "settle conflicts (or --held deletions, or files --not-in-checkout): --mine keeps this checkout's, --theirs takes the service's",
    load: async () => (await import('./commands/resolve.ts')).resolveCommand(),
  },
  {
    name: 'history',
    usage: '[options] <file> | purge [options] <file>',
    summary:
      'list the versions the service keeps of a file: when, who, size; `purge` removes them (an operator)',
    load: async () => (await import('./commands/history.ts')).historyCommand(),
  },
  {
    name: 'restore',
    usage: '[options] <file>',
    summary: 'write a version the service keeps of a file to disk (--version N or --at TIME)',
    load: async () => (await import('./commands/history.ts')).restoreCommand(),
  },
  {
    name: 'status',
    usage: '[options]',
    summary: 'show each repository: flows, files, pending, warnings, last sync',
    load: async () => (await import('./commands/status.ts')).statusCommand(),
  },
  {
    name: 'pause',
    usage: '[options] [folders...]',
    summary: 'pause syncing of repositories: changes are counted, sent when resumed',
    load: async () => (await import('./commands/pause.ts')).pauseCommand(),
  },
  {
    name: 'resume',
    usage: '[options] [folders...]',
    summary: 'resume syncing of paused repositories: what changed meanwhile is sent',
    load: async () => (await import('./commands/pause.ts')).resumeCommand(),
  },
  {
    name: 'doctor',
    usage: '[options]',
    summary:
      'check what makes sync fail without a word (keychain, service, watches, folders), each with its fix',
    load: async () => (await import('./commands/doctor.ts')).doctorCommand(),
  },
  {
    name: 'ui',
    usage: '[options]',
    summary: 'run the agent and print the address of its window, for a browser',
    load: async () => (await import('./commands/start.ts')).uiCommand(),
  },
  {
    name: 'serve',
    usage: '[options]',
    summary: 'run the remote-function service (all 20 functions) on this machine',
    load: async () => (await import('./commands/serve.ts')).serveCommand(),
  },
  {
    name: 'service',
    usage: '<export|import|member|token|audit> [options]',
    summary: "a service's data, members and audit log (export, import, member, token, audit)",
    load: async () => (await import('./commands/service.ts')).serviceCommand(),
  },
  {
    name: 'login',
    usage: '[options]',
    summary: 'check a token with the service and keep it in the OS keychain',
    load: async () => (await import('./commands/login.ts')).loginCommand(),
  },
  {
    name: 'whoami',
    usage: '[options]',
    summary: 'who the service takes you for: member, role, token',
    load: async () => (await import('./commands/whoami.ts')).whoamiCommand(),
  },
  {
    name: 'logout',
    usage: '[options]',
    summary: "remove this service's tokens from the OS keychain",
    load: async () => (await import('./commands/logout.ts')).logoutCommand(),
  },
  {
    name: 'call',
    usage: '[options] <path> [stdin]',
    summary: 'call one function and print its value as JSON',
    load: async () => (await import('./commands/call.ts')).callCommand(),
  },
  {
    name: 'functions',
    usage: '[options]',
    summary: 'list the 20 functions of the service',
    load: async () => (await import('./commands/functions.ts')).functionsCommand(),
  },
  {
    name: 'autostart',
    usage: '<action>',
    summary: 'start the agent when you log in (enable, disable, status)',
    load: async () => (await import('./commands/autostart.ts')).autostartCommand(),
  },
];

/**
 * The program with the command named in `args` (the arguments after `flowsync`) loaded in full, and every other
 * command as a name and a summary, which is all the command list and commander's "unknown command" need.
 */
export async function buildProgram(args: readonly string[]): Promise<Command> {
  const program = new Command('flowsync')
    .description('Keep flow-definition folders in sync with a remote-function service.')
    .version('0.1.0')
    // Options after a command are the command's: `flowsync restore <file> --version N` is not the program's version.
    .enablePositionalOptions()
    .showHelpAfterError('(run with --help for usage)')
    .exitOverride()
    .configureOutput({ outputError: (text, write) => write(text) })
    .configureHelp({ subcommandTerm: (command) => `${command.name()} ${command.usage()}` });
  const named = namedCommand(args);
  for (const entry of COMMANDS) {
    const command = entry.name === named ? await entry.load() : new Command(entry.name).usage(entry.usage);
    program.addCommand(fitted(command.summary(entry.summary), program));
  }
  return program;
}

/** A command (and its own subcommands: `service export`) as the program wants it, under `parent`. */
function fitted(command: Command, parent: Command): Command {
  // Descriptions are written in lines of ~110 columns, and commander wraps them to the terminal again: each break
  // cut a wrapped line short ("help text wrapped twice"). A break before an indented line or a blank one stays.
  command.description(command.description().replace(/(?<!\n)\n(?=\S)/g, ' '));
  // addCommand does not pass exitOverride and the output settings on: copy them so usage errors exit with 2.
  command.copyInheritedSettings(parent);
  for (const sub of command.commands) fitted(sub, command);
  return command;
}

/** The command `flowsync <args>` runs (or `flowsync help <command>` explains): the first word not an option. */
function namedCommand(args: readonly string[]): string | undefined {
  const words = args.filter((arg) => !arg.startsWith('-'));
  return words[0] === 'help' ? words[1] : words[0];
}

export async function runCli(argv: string[]): Promise<number> {
  const program = await buildProgram(argv.slice(2));
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
