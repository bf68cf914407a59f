/**
 * Why a file on disk is not sent, in a person's words, with what to do about it: the one mapping the CLI's lines
 * and the window share. The codes are the sync layer's per-file warnings.
 */
const WARNINGS: Record<string, { reason: string; fix: string }> = {
  binary: { reason: 'binary (not UTF-8 text)', fix: 'add it to .gitignore' },
  oversized: { reason: 'over 1 MiB', fix: 'add it to .gitignore' },
  'unsafe-path': { reason: 'a name the service refuses', fix: 'rename it' },
  symlink: { reason: 'a symbolic link', fix: 'not followed' },
  special: { reason: 'a FIFO, socket or device', fix: 'not read' },
};

/** `binary` → "binary (not UTF-8 text): add it to .gitignore"; an unknown code is shown as it is. */
export function describeWarning(code: string): string {
  const known = WARNINGS[code];
  return known ? `${known.reason}: ${known.fix}` : code;
}
