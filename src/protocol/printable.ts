/**
 * Characters a terminal obeys instead of showing, or that break a line: C0 (ESC starts a sequence that clears the
 * screen or sets the window title, BEL, backspace and \r overwrite what was printed, \n starts a fake line), DEL
 * and C1 (U+009B is CSI on its own), the Unicode line and paragraph separators, and the bidirectional overrides and
 * isolates that show text in another order than it is (CVE-2021-42574).
 */
// eslint-disable-next-line no-control-regex -- finding control characters is this module's job
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;
/** The same minus C0, which JSON.stringify already writes as escapes. */
const UNSAFE_IN_JSON = /[\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

const NAMED: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

/**
 * Text from outside (a service's message, a file or repository name, a config value) as one line that is safe to
 * print on a terminal: every character above spelled out (`\x1b`, `\n`, `\u202e`), the rest as it is. Every place
 * the CLI prints such text goes through here.
 */
export function printable(text: string): string {
  return text.replace(UNSAFE, (char) => {
    const code = char.charCodeAt(0);
    return NAMED[char] ?? (code < 0x100 ? `\\x${hex(code, 2)}` : `\\u${hex(code, 4)}`);
  });
}

/**
 * A value as indented JSON that is safe on a terminal and still the same JSON: `\u009b` is what JSON.parse reads
 * back as the character itself, so a script gets the service's text unchanged.
 */
export function printableJson(value: unknown): string {
  return (JSON.stringify(value, null, 2) ?? 'null').replace(
    UNSAFE_IN_JSON,
    (char) => `\\u${hex(char.charCodeAt(0), 4)}`,
  );
}

function hex(code: number, width: number): string {
  return code.toString(16).padStart(width, '0');
}
