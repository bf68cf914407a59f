import { plural, printable, type DoctorCheck, type DoctorVerdict } from '../../protocol/index.ts';

const MARK: Record<DoctorVerdict, string> = { pass: '[✓]', warn: '[!]', fail: '[✗]', skip: '[-]' };

/** The report as a person reads it: a line per check, its fix below it, and the sum at the end. */
export function doctorLines(checks: readonly DoctorCheck[]): string[] {
  const lines: string[] = [];
  for (const check of checks) {
    // Folder names, the service's words and keytar's come from outside: one line each.
    lines.push(`${MARK[check.verdict]} ${printable(check.message)}`);
    if (check.fix) lines.push(`    fix: ${printable(check.fix)}`);
  }
  const failed = checks.filter((check) => check.verdict === 'fail').length;
  const warned = checks.filter((check) => check.verdict === 'warn').length;
  lines.push(
    '',
    failed + warned === 0
      ? 'No problems found.'
      : [failed > 0 ? plural(failed, 'problem') : null, warned > 0 ? plural(warned, 'warning') : null]
          .filter(Boolean)
          .join(', ') + ' (fixes above).',
  );
  return lines;
}
