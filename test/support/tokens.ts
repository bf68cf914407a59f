/**
 * The token with its last character changed, for a test that needs an almost-right token. Appending a fixed
 * letter instead failed one run in 64: a random base64url token ends with that letter as often.
 */
export function almostToken(token: string): string {
  return `${token.slice(0, -1)}${token.endsWith('x') ? 'y' : 'x'}`;
}
