import { describe, expect, it } from 'vitest';
import { describeFileWarning as describeWarning } from '../../src/protocol/index.ts';

/** What the window's Sync screen (its flows and files) and `flowsync status` say about a file that is not sent. */
describe('flows and files', () => {
  it('says why each kind of file is not sent, and what to do', () => {
    expect(describeWarning('oversized')).toBe('over 1 MiB: add it to .gitignore');
    expect(describeWarning('unsafe-path')).toBe('a name the service refuses: rename it');
    expect(describeWarning('symlink')).toBe('a symbolic link: not followed');
    expect(describeWarning('special')).toBe('a FIFO, socket or device: not read');
  });
});
