/**
 * "1 flow", "2 flows", "1,000 files": every count said in words, by the CLI, the agent's lines and the window alike
 * (one rule: "1 flows refused" was a ternary forgotten in one of a dozen places).
 */
export function plural(count: number, one: string, many = `${one}s`): string {
  return `${grouped(count)} ${count === 1 ? one : many}`;
}

/**
 * 1234567 as "1,234,567", what toLocaleString('en') writes, without it: its first call loads ICU's locale data, 115
 * million instructions, which were a quarter of a `flowsync status` with a repository.
 */
function grouped(count: number): string {
  if (!Number.isSafeInteger(count)) return count.toLocaleString('en');
  return String(count).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}

/**
 * The flows a round touched, by name: "flows/ci", "flows/ci and flows/web", "5 flows (flows/a, flows/b, flows/c, …)".
 * A round summed up as "Sent 1 flow: 0 new, 0 changed, 123 deleted" did not say which one.
 */
export function namedFlows(flowPaths: Iterable<string>): string {
  const names = [...new Set(flowPaths)].sort();
  if (names.length === 0) return plural(0, 'flow');
  if (names.length === 1) return names[0]!;
  if (names.length === 2) return `${names[0]} and ${names[1]}`;
  const shown = names.slice(0, 3).join(', ');
  return `${plural(names.length, 'flow')} (${shown}${names.length > 3 ? ', …' : ''})`;
}
