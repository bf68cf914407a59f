import { describe, expect, it } from 'vitest';
import { contentNotItsHash } from '../../src/client/content-hash.ts';
import { sha256 } from '../support/flows.ts';

/** Which answers of a service carry content that is not what its hash names: each row a value, described. */
const GOOD = 'build: 1\n';
const rows: { description: string; value: unknown; refused: boolean }[] = [
  {
    description: 'a listing without content: nothing to check',
    value: { files: [{ flow_path: 'flows/a', path: 'x.yml', hash: 'not even hex' }], next: null },
    refused: false,
  },
  {
    description: 'a listing whose content is what its hash names',
    value: {
      files: [{ flow_path: 'flows/a', path: 'x.yml', hash: sha256(GOOD), content: GOOD }],
      next: null,
    },
    refused: false,
  },
  {
    description: 'a listing with one file of other bytes under its hash',
    value: {
      files: [
        { flow_path: 'flows/a', path: 'x.yml', hash: sha256(GOOD), content: GOOD },
        { flow_path: 'flows/a', path: 'y.yml', hash: sha256(GOOD), content: 'evil\n' },
      ],
      next: null,
    },
    refused: true,
  },
  {
    description: 'a version whose content is what its hash names (non-ASCII: UTF-8 bytes hashed)',
    value: { version: 3, flow_path: 'flows/a', path: 'x.yml', hash: sha256('é\n'), content: 'é\n' },
    refused: false,
  },
  {
    description: 'a version of a deletion: no content, no hash',
    value: { version: 3, flow_path: 'flows/a', path: 'x.yml', hash: null, content: null },
    refused: false,
  },
  {
    description: 'a version that says it is a deletion and gives content',
    value: { version: 3, flow_path: 'flows/a', path: 'x.yml', hash: null, content: GOOD },
    refused: true,
  },
  {
    description: 'a version whose hash is in capitals: not the hash the state compares',
    value: {
      version: 3,
      flow_path: 'flows/a',
      path: 'x.yml',
      hash: sha256(GOOD).toUpperCase(),
      content: GOOD,
    },
    refused: true,
  },
];

describe('content against its hash', () => {
  it.each(rows)('$description', ({ value, refused }) => {
    expect(contentNotItsHash(value) !== null).toBe(refused);
  });
  it('names the file and both hashes', () => {
    const said = contentNotItsHash({
      files: [{ flow_path: 'flows/a', path: 'y.yml', hash: sha256(GOOD), content: 'x' }],
    });
    expect(said).toMatch(/flows\/a\/y\.yml/);
    expect(said).toContain(sha256(GOOD).slice(0, 12));
    expect(said).toContain(sha256('x').slice(0, 12));
  });
});
