/** `2026-11-23 14:02:11`, local time. Not toLocaleDateString: its locale data costs 8 MB and 30 ms (bench/cli.ts). */
export function localTime(iso: string): string {
  const date = new Date(iso);
  const day = [date.getFullYear(), date.getMonth() + 1, date.getDate()];
  return `${day.map((n) => String(n).padStart(2, '0')).join('-')} ${date.toTimeString().slice(0, 8)}`;
}

/** `14:02`, local time: when the last look at the service went through, as "in sync as of" says it. */
export function clockTime(at: string | number): string {
  return new Date(at).toTimeString().slice(0, 5);
}
