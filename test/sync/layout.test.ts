import { describe, expect, it } from 'vitest';
import { FlowLayout } from '../../src/sync/flow-layout.ts';
import { IgnoreRules } from '../../src/sync/ignore-rules.ts';
import { makeRepo } from '../support/repo.ts';

describe('the flow layout', () => {
  const layout = new FlowLayout(['flows/', './apps/flows']);

  it('puts a file in the flow right under a root, with its path inside the flow', () => {
    expect(layout.locate('flows/hello/main.yaml')).toEqual({ flowPath: 'flows/hello', path: 'main.yaml' });
    expect(layout.locate('apps/flows/x/a/b.ts')).toEqual({ flowPath: 'apps/flows/x', path: 'a/b.ts' });
    expect(layout.locate('flows/README.md')).toBeNull();
    expect(layout.locate('src/flows/x/a.ts')).toBeNull();
    expect(layout.locate('flowsy/x/a.ts')).toBeNull();
  });

  it('names paths the service would refuse', () => {
    expect(FlowLayout.unsafeReason({ flowPath: 'flows/a', path: 'x\\y.yaml' })).toContain('backslash');
    expect(FlowLayout.unsafeReason({ flowPath: 'flows/a', path: 'ok.yaml' })).toBeNull();
  });
});

describe('ignore rules', () => {
  it('apply the built-in list and every .gitignore from the root down, each relative to its folder', () => {
    const repo = makeRepo({
      '.gitignore': 'build/\n*.log\n',
      'flows/a/.gitignore': '/local-only.yaml\n!keep.log\n',
    });
    try {
      const rules = new IgnoreRules(repo.root);
      expect(rules.ignores('flows/a/node_modules/')).toBe(true);
      expect(rules.ignores('flows/a/.git/')).toBe(true);
      expect(rules.ignores('flows/a/x.yaml.swp')).toBe(true);
      expect(rules.ignores('flows/a/.DS_Store')).toBe(true);
      expect(rules.ignores('flows/a/build/')).toBe(true);
      expect(rules.ignores('flows/a/debug.log')).toBe(true);
      expect(rules.ignores('flows/a/local-only.yaml')).toBe(true);
      expect(rules.ignores('flows/b/local-only.yaml')).toBe(false);
      expect(rules.ignores('flows/a/main.yaml')).toBe(false);
    } finally {
      repo.cleanup();
    }
  });
});
