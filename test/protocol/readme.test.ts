import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { extensionsMarkdownTable, functionsMarkdownTable } from '../../src/protocol/index.ts';

/** Cells trimmed and separator rows reduced, so Prettier's column alignment does not count as a difference. */
function normalizeTable(markdown: string): string[] {
  return markdown
    .trim()
    .split('\n')
    .map((line) =>
      line
        .split('|')
        .map((cell) => cell.trim().replace(/^-{3,}$/, '---'))
        .join('|'),
    );
}

describe('docs/team-service.md', () => {
  it('documents exactly the 20 functions of the protocol table', () => {
    const readme = readFileSync(new URL('../../docs/team-service.md', import.meta.url), 'utf8');
    const section = /<!-- functions:start[^>]*-->\n([\s\S]*?)\n<!-- functions:end -->/.exec(readme);
    expect(section, 'docs/team-service.md has the functions section').not.toBeNull();
    expect(normalizeTable(section![1]!)).toEqual(normalizeTable(functionsMarkdownTable()));
  });

  it('documents exactly the extensions beyond the spec', () => {
    const readme = readFileSync(new URL('../../docs/team-service.md', import.meta.url), 'utf8');
    const section = /<!-- extensions:start[^>]*-->\n([\s\S]*?)\n<!-- extensions:end -->/.exec(readme);
    expect(section, 'docs/team-service.md has the extensions section').not.toBeNull();
    expect(normalizeTable(section![1]!)).toEqual(normalizeTable(extensionsMarkdownTable()));
  });
});
