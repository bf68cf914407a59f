/** "1 flow", "2 flows", "1,000 files": every count the window shows in words goes through here. */
export function plural(count: number, one: string, many = `${one}s`): string {
  return `${count.toLocaleString('en')} ${count === 1 ? one : many}`;
}
