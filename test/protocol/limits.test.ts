import { describe, expect, it } from 'vitest';
import { findDeepNesting } from '../../src/protocol/index.ts';

describe('findDeepNesting (the check before a body is parsed)', () => {
  it.each([
    ['a shallow body', '{"args":{"a":[1,2,{"b":null}]}}', 4, null],
    ['brackets inside strings', '{"a":"[[[[{{{{","b":"\\"[[[["}', 1, null],
    ['an escaped backslash before a closing quote', '{"a":"\\\\","b":[[1]]}', 2, ['b']],
    ['the key after a comma', '{"a":1,"b":{"c":[[]]}}', 3, ['b', 'c']],
    ['indexes when no field has a name', '[0,1,[2,[3]]]', 2, [2, 1]],
    ['a key with an escape', '{"x\\"y":[[]]}', 2, ['x"y']],
    ['an unterminated string', '{"a":"[[[[', 1, null],
  ])('%s', (_name, text, depth, expected) => {
    expect(findDeepNesting(text, depth)).toEqual(expected);
    if (expected === null) expect(findDeepNesting(text, depth + 1)).toBeNull();
  });

  it('walks a million levels without recursion', () => {
    expect(findDeepNesting('['.repeat(1_000_000) + ']'.repeat(1_000_000))).toEqual([0, 0, 0, 0, 0, 0, 0, 0]);
  });
});
