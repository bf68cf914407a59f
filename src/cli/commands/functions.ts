import { Command } from 'commander';
import { FUNCTIONS } from '../../protocol/index.ts';

export function functionsCommand(): Command {
  return new Command('functions')
    .description(
      'List every function with its kind and who may call it (user = Bearer token, admin = Admin token).',
    )
    .option('--json', 'print as JSON')
    .addHelpText(
      'after',
      '\nExamples:\n  $ flowsync functions\n  $ flowsync functions --json | jq -r ".[].path"',
    )
    .action((options: { json?: boolean }) => {
      if (options.json) {
        const list = FUNCTIONS.map(({ number, path, kind, access, summary }) => ({
          number,
          path,
          kind,
          access,
          summary,
        }));
        process.stdout.write(`${JSON.stringify(list, null, 2)}\n`);
        return;
      }
      const width = Math.max(...FUNCTIONS.map((fn) => fn.path.length));
      const lines = FUNCTIONS.map((fn) => {
        const who = fn.access === 'admin' ? 'admin' : 'any';
        return `${String(fn.number).padStart(2)}  ${fn.path.padEnd(width)}  ${fn.kind.padEnd(7)}  ${who.padEnd(5)}  ${fn.summary}`;
      });
      process.stdout.write(
        `${' #'}  ${'path'.padEnd(width)}  kind     who    what it does\n${lines.join('\n')}\n`,
      );
    });
}
