const WARNINGS: Record<string, string> = {
  binary: 'binary (not UTF-8 text)',
  oversized: 'over 1 MiB',
  'unsafe-path': 'a name the service refuses (a backslash or similar)',
};

export function describeWarning(warning: string): string {
  return WARNINGS[warning] ?? warning;
}
