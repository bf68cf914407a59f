import { describe, expect, it } from 'vitest';
import { refusedRow } from '../../src/service/transfer/row-rules.ts';
import { sha256 } from '../support/flows.ts';

/**
 * The rows of an export checked by the service's own rules before an import writes any (issue 36); the CLI test
 * (test/cli/service-transfer.test.ts) runs crafted files through `flowsync service import` on both databases.
 */
const CONTENT = 'steps: [build]\n';
const HASH = sha256(CONTENT);
const fileRow = (path: unknown, hash: unknown = HASH, content: unknown = CONTENT) =>
  ['f-1', 'fl-1', path, hash, content, 15, 't', 't'] as (string | number | null)[];
const versionRow = (path: string, hash: string | null, content: string | null) =>
  [7, 'r-1', 'flows/ci', path, hash, content, 0, 't', null, null, null] as (string | number | null)[];

describe('refusedRow', () => {
  it.each([
    ['a flow file as sync_batch takes it', 'flow_files', fileRow('build.yml'), null],
    ['a version with its content', 'file_versions', versionRow('build.yml', HASH, CONTENT), null],
    ['a deletion (no hash, no content)', 'file_versions', versionRow('build.yml', null, null), null],
    [
      'a version from before history kept contents',
      'file_versions',
      versionRow('build.yml', HASH, null),
      null,
    ],
    ['a row of a table without paths', 'repo_configs', ['acme', 'app', '{}', 't'], null],
    ['a path out of the flow', 'flow_files', fileRow('a/../../x'), 'its path "a/../../x" has a .. segment'],
    ['a path that is not text', 'flow_files', fileRow(7), 'its path is not text'],
    [
      'a flow out of the repository',
      'flows',
      ['fl-1', 'r-1', '../x', HASH, 't', 't'],
      'its flow_path "../x" has a .. segment',
    ],
    [
      'a version at an absolute path',
      'file_versions',
      versionRow('/etc/x', HASH, CONTENT),
      'its path "/etc/x" is absolute',
    ],
    [
      'a hash of other content',
      'flow_files',
      fileRow('a', sha256('other')),
      'has a hash that is not the SHA-256 of its content',
    ],
    ['a hash that is no SHA-256', 'flow_files', fileRow('a', 'ABC'), 'has a hash that is not a hex SHA-256'],
    [
      'a deletion that carries content',
      'file_versions',
      versionRow('a', null, CONTENT),
      'is a deletion (no hash) that carries content',
    ],
  ])('%s', (_name, table, row, reason) => {
    expect(refusedRow(table, row as (string | number | null)[])).toBe(reason);
  });
});
