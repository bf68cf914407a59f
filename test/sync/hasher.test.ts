import { createHash } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { Hasher } from '../../src/sync/index.ts';
import { makeRepo, type TestRepo } from '../support/repo.ts';

/** The hasher on the main thread, in slices: real files, read errors made real by its read hook. */
let repo: TestRepo;

afterEach(() => repo.cleanup());

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

function flowOf(count: number, size = 0): { paths: string[]; contents: string[] } {
  const files: Record<string, string> = {};
  for (let i = 0; i < count; i++) files[`flows/a/file${i}.yaml`] = `file ${i}\n${'x'.repeat(size)}`;
  repo = makeRepo(files);
  return { paths: Object.keys(files), contents: Object.values(files) };
}

describe('the hasher', () => {
  it('reads every file in order, across slices, and lets the event loop run between them', async () => {
    // 3,000 files of 4 KiB: more than one slice of 8 ms on any machine this runs on.
    const { paths, contents } = flowOf(3000, 4096);
    const hasher = new Hasher();
    let turns = 0;
    const ticker = setInterval(() => turns++, 0);
    const results = await hasher.hash(repo.root, paths, true);
    clearInterval(ticker);
    expect(results).toEqual(
      contents.map((content) => ({
        missing: false,
        size: content.length,
        hash: sha256(content),
        warning: null,
        content,
      })),
    );
    expect(turns).toBeGreaterThan(0);
  });

  it('reports a file it could not read as unreadable, never as gone, and reads the rest', async () => {
    const { paths, contents } = flowOf(40);
    const poison = paths[5]!;
    const hasher = new Hasher({
      beforeRead: (path) => {
        if (path === poison) throw Object.assign(new Error('I/O error'), { code: 'EIO' });
      },
    });
    const results = await hasher.hash(repo.root, paths, true);
    expect(results[5]).toEqual({ missing: false, size: 0, hash: '', warning: 'unreadable', content: null });
    for (const [index, result] of results.entries()) {
      if (index !== 5) expect(result).toMatchObject({ missing: false, content: contents[index] });
    }
  });

  it('gives no content unless asked, and says what is binary', async () => {
    repo = makeRepo({ 'flows/a/text.yaml': 'text\n', 'flows/a/zero.bin': 'a\u0000b' });
    const hasher = new Hasher();
    const [text, zero] = await hasher.hash(repo.root, ['flows/a/text.yaml', 'flows/a/zero.bin']);
    expect(text).toEqual({ missing: false, size: 5, hash: sha256('text\n'), warning: null, content: null });
    expect(zero).toMatchObject({ missing: false, warning: 'binary', content: null });
  });

  it('refuses to go on once closed', async () => {
    const { paths } = flowOf(3000, 4096);
    const hasher = new Hasher();
    const hashing = hasher.hash(repo.root, paths);
    await hasher.close();
    await expect(hashing).rejects.toThrow('the hasher is closed');
  });
});
