import type { RepeatPolicy } from '../protocol/index.ts';

export interface RetryOptions {
  /** Attempts in all, the first included. */
  attempts: number;
  /** Back-off before the second attempt; doubled each time, with jitter. */
  baseDelayMs: number;
  maxDelayMs: number;
}

export const DEFAULT_RETRY: RetryOptions = { attempts: 4, baseDelayMs: 250, maxDelayMs: 10_000 };

/** Errors that happen before a byte of the request left: repeating the call cannot apply it twice. */
const NEVER_SENT_CODES = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EADDRNOTAVAIL',
  'UND_ERR_CONNECT_TIMEOUT',
]);

/** HTTP codes that say "not now" rather than "no": a later attempt may succeed. */
const RETRIABLE_STATUS = new Set([408, 429, 500, 502, 503, 504]);

export function wasNeverSent(code: string): boolean {
  return NEVER_SENT_CODES.has(code);
}

export function mayRetryFailure(policy: RepeatPolicy, code: string): boolean {
  return policy === 'safe' || wasNeverSent(code);
}

/** A reply with these codes reached the service, so only a function safe to repeat is sent again. */
export function mayRetryStatus(policy: RepeatPolicy, statusCode: number): boolean {
  return policy === 'safe' && RETRIABLE_STATUS.has(statusCode);
}

/**
 * Exponential back-off with "equal jitter", the one rule of every wait after a failure (the client's repeats
 * within a call, the sync scheduler's rounds, a flow that failed alone): the ceiling is `baseMs` doubled per
 * `attempt` (0 for the first wait), at most `maxMs`; the delay is half of it fixed and half random, so that the
 * retries of many clients spread while none comes back sooner than half the ceiling.
 */
export function backoffDelay(
  attempt: number,
  baseMs: number,
  maxMs: number,
  random: () => number = Math.random,
): number {
  const ceiling = Math.min(maxMs, baseMs * 2 ** Math.max(0, attempt));
  return ceiling / 2 + random() * (ceiling / 2);
}

/** `Retry-After` in seconds or as an HTTP date, in ms from now; null when absent or unreadable. */
export function retryAfterMs(header: string | string[] | undefined, now = Date.now()): number | null {
  const value = Array.isArray(header) ? header[0] : header;
  if (value === undefined || value.trim() === '') return null;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? null : Math.max(0, date - now);
}
