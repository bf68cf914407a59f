import { describe, expect, it } from 'vitest';
import { distinctEmails } from '../../src/agent/index.ts';

describe('the emails git says are the user’s, in the order they are tried (issue 42)', () => {
  it.each([
    [[null], []],
    [
      ['ada@example.com', 'ada@laptop.local'],
      ['ada@example.com', 'ada@laptop.local'],
    ],
    [
      ['Ada@Example.com', 'ada@example.com', 'ada@laptop.local'],
      ['Ada@Example.com', 'ada@laptop.local'],
    ],
    [[null, ' ada@example.com ', ''], ['ada@example.com']],
    [
      ['work@acme.dev', null, 'me@home.org'],
      ['work@acme.dev', 'me@home.org'],
    ],
  ])('%j → %j', (found, emails) => {
    expect(distinctEmails(found)).toEqual(emails);
  });
});
