/** ISO-8601 time, the one format every record uses. */
export function nowIso(): string {
  return new Date().toISOString();
}
