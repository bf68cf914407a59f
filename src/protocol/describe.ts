import { EXTENSION_FUNCTIONS, FUNCTIONS, type FunctionSpec } from './functions.ts';

/**
 * The README's table of the 20 functions, generated so that the documentation cannot drift from the code. `scope`
 * is who may call it: a member of that role or above (read ⊂ write ⊂ operator), or an invite (members.ts).
 */
export function functionsMarkdownTable(functions: readonly FunctionSpec[] = FUNCTIONS): string {
  const rows = functions.map((fn) => {
    const fields = Object.keys((fn.args as unknown as { shape: Record<string, unknown> }).shape).filter(
      (key) => key !== 'baggage',
    );
    return `| ${fn.number} | \`${fn.path}\` | ${fn.kind} | ${fn.scope} | ${fields.map((f) => `\`${f}\``).join(', ')} | ${fn.summary} |`;
  });
  return [
    '| # | path | kind | scope | args (besides `baggage`) | what it does |',
    '| --- | --- | --- | --- | --- | --- |',
    ...rows,
  ].join('\n');
}

/** The README's table of the extensions beyond the spec's 20. */
export function extensionsMarkdownTable(): string {
  return functionsMarkdownTable(EXTENSION_FUNCTIONS);
}
