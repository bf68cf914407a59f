/**
 * "1 flow", "2 flows", "1,000 files": every count said in words, by the CLI, the agent's lines and the window alike
 * (one rule: "1 flows refused" was a ternary forgotten in one of a dozen places).
 */
export function plural(count: number, one: string, many = `${one}s`): string {
  return `${count.toLocaleString('en')} ${count === 1 ? one : many}`;
}
