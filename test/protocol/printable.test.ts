import { describe, expect, it } from 'vitest';
import { printable, printableJson } from '../../src/protocol/index.ts';

const every = (from: number, to: number) =>
  Array.from({ length: to - from + 1 }, (_, i) => String.fromCharCode(from + i));

describe('printable: outside text as one line a terminal shows and does not obey', () => {
  it('spells out every C0 and C1 control character, DEL, the line separators and the bidi overrides', () => {
    const unsafe = [...every(0x00, 0x1f), ...every(0x7f, 0x9f), '\u2028', '\u2029', ...every(0x202a, 0x202e)];
    for (const char of [...unsafe, ...every(0x2066, 0x2069)]) {
      const shown = printable(`a${char}b`);
      expect(shown).toMatch(/^a\\(x[0-9a-f]{2}|u[0-9a-f]{4}|[nrt])b$/);
    }
    expect(printable('\x1b]0;pwned\x07\x1b[2J\u009b2J\r\nok')).toBe(
      '\\x1b]0;pwned\\x07\\x1b[2J\\x9b2J\\r\\nok',
    );
    expect(printable('\u202eevil')).toBe('\\u202eevil');
  });

  it('leaves the rest as it is: accents, other scripts, emoji, typographic marks', () => {
    const text = 'flows/café/日本語 ✓ 🚀 “quoted” … · é';
    expect(printable(text)).toBe(text);
  });
});

describe('printableJson: the same JSON, without a control character on the terminal', () => {
  it('reads back as the value it was made from', () => {
    const value = { message: '\x1b]0;pwned\x07\u009b2J\u202e\n', nested: ['\u0085', 'plain'] };
    const text = printableJson(value);
    expect(printable(text)).toBe(text.replaceAll('\n', '\\n'));
    expect(JSON.parse(text)).toEqual(value);
    expect(printableJson(undefined)).toBe('null');
  });
});
