import { Command } from 'commander';
import { configuredServiceUrl, serviceKeyOf } from '../../agent/index.ts';
import { doctorReportSchema, printableJson, type DoctorCheck } from '../../protocol/index.ts';
import { normalizeServiceUrl } from '../../secrets/index.ts';
import { agentCheck } from '../doctor/agent.ts';
import { configCheck, dataFolderCheck } from '../doctor/data-folder.ts';
import { keychainCheck } from '../doctor/keychain.ts';
import { doctorLines } from '../doctor/report.ts';
import { repositoryChecks } from '../doctor/repositories.ts';
import { serviceChecks } from '../doctor/service.ts';
import { doctorExitCode } from '../doctor/verdicts.ts';

// The description is one line per paragraph: commander wraps it to the terminal (a line broken here was broken twice).
export function doctorCommand(): Command {
  return new Command('doctor')
    .description(
      'Checks what makes sync fail without a word, and says for each what to do: the data folder (private, ' +
        'writable), the config file (valid, private), the agent (running, answering), the OS keychain (there and ' +
        "unlocked), the service (it answers, takes your token, what it can do), the clock against the service's " +
        "(a minute apart at most), the inotify watches sync needs against the kernel's limit, and each repository " +
        'of the config (its folder there, flows found, synced from this checkout). Changes nothing (a probe ' +
        'written to the keychain and one to the data folder are removed at once), and never starts an agent or ' +
        'takes its lock.\n\n' +
        'Exit code: 0 when every check passed, 4 when some only warn (sync goes on, something needs you), 1 when ' +
        'one failed (sync does not happen, or your data is open to others, until it is fixed).',
    )
    .option(
      '--url <url>',
      "the service to check (default: $FLOWSYNC_URL, else the config file's serviceUrl, else the embedded one)",
    )
    .option('--json', 'print the checks as JSON: [{check, verdict, folder, message, fix}]')
    .addHelpText(
      'after',
      '\nExamples:\n  $ flowsync doctor\n' +
        '  $ flowsync doctor --json | jq \'.[] | select(.verdict != "pass")\'\n\n' +
        'A report:\n' +
        '  [✓] data folder: ~/.local/share/flowsync is private (0700) and takes writes\n' +
        '  [!] agent: not running, so your 1 repository is not synced now\n' +
        '      fix: `flowsync start` (`flowsync autostart enable` starts it when you log in)\n' +
        '  [✗] service: the service at https://flows.example.com refuses your token (from the OS keychain): …\n' +
        '      fix: sign in again: flowsync login --url https://flows.example.com',
    )
    .action(async (options: { url?: string; json?: boolean }) => {
      // First, before anything opens a file there (opening takes the agent's files to their modes).
      const dataFolder = dataFolderCheck();
      const { check: configRead, config } = configCheck();
      const given = configuredServiceUrl(options.url, config);
      const configured = given ? normalizeServiceUrl(given) : '';
      const agent = await agentCheck(config.repositories.length);
      const keychain = await keychainCheck(configured === '');
      const service = await serviceChecks({ configured, running: agent.running });
      const { watches, repositories } = await repositoryChecks(config, serviceKeyOf(given));
      const checks: DoctorCheck[] = [
        dataFolder,
        configRead,
        agent.check,
        keychain,
        ...service,
        watches,
        ...repositories,
      ];
      if (options.json) process.stdout.write(`${printableJson(doctorReportSchema.parse(checks))}\n`);
      else process.stdout.write(`${doctorLines(checks).join('\n')}\n`);
      process.exitCode = doctorExitCode(checks);
    });
}
