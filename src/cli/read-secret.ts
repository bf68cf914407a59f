import { read } from 'read';
import { UsageError } from './usage-error.ts';

/**
 * Reads a secret without echoing it: a hidden prompt on a terminal, else the first line of stdin (for scripts:
 * `echo "$TOKEN" | flowsync login`). Never from an argument, which would land in shell history and `ps`.
 */
export async function readSecret(what: string): Promise<string> {
  let secret: string;
  if (process.stdin.isTTY) {
    secret = await read({ prompt: `Paste the ${what}: `, silent: true, replace: '', output: process.stderr });
  } else {
    let text = '';
    for await (const chunk of process.stdin) text += String(chunk);
    secret = text.split(/\r?\n/)[0] ?? '';
  }
  secret = secret.trim();
  if (secret === '') throw new UsageError(`No ${what} given: paste it at the prompt or pipe it on stdin.`);
  return secret;
}
