import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { describeIssues, plainIssue, repoConfigSchema, toWireIssues } from '../../src/protocol/index.ts';

/**
 * Issue 42 point 6: a hand edit of `.flowsync/repo-config.json` that the schema refuses was said in zod's words
 * ("Invalid input: expected nonoptional, received undefined"), in the window, `status`, the agent's lines and
 * `call`. Each row: a document, and the line a person reads (which field, what it should be).
 */
const ROWS: { description: string; config: unknown; says: string }[] = [
  {
    description: 'a required field left out is missing, with what it holds',
    config: { background_jobs: [{ name: 'dev', command: 'npm run dev' }] },
    says: 'background_jobs.0.description: is missing (text is expected)',
  },
  {
    description: 'a value of the wrong kind says what it should be and what it is',
    config: { editor: 3 },
    says: 'editor: must be text (it is a number)',
  },
  {
    description: 'a list where an object is expected',
    config: { artifact_config: [] },
    says: 'artifact_config: must be an object (it is a list)',
  },
  {
    description: 'a field the file does not have is named, without zod words',
    config: { editr: 'code' },
    says: 'unknown field "editr"',
  },
  {
    description: 'our own words are kept',
    config: { background_jobs: [{ name: ' ', command: 'x', description: '' }] },
    says: 'background_jobs.0.name: Cannot be empty',
  },
];

describe('schema issues in a person’s words', () => {
  for (const row of ROWS)
    it(row.description, () => {
      const parsed = repoConfigSchema.safeParse(row.config);
      expect(parsed.success).toBe(false);
      const said = describeIssues(toWireIssues(parsed.error!.issues), '');
      expect(said).toBe(row.says);
      expect(said).not.toMatch(/Invalid input|expected \w+, received|nonoptional|Unrecognized/);
    });

  it('zod’s other words, as a message from the service carries them, are said plainly too', () => {
    const said = (message: string) => plainIssue({ message });
    expect(said('Invalid input: expected nonoptional, received undefined')).toBe('is missing');
    expect(said('Invalid option: expected one of "ask"|"plan"')).toBe('must be one of "ask", "plan"');
    expect(said('Too small: expected string to have >=1 characters')).toBe('must have at least 1 character');
    expect(said('Too big: expected array to have <=100 items')).toBe('must have at most 100 items');
    expect(said('Too small: expected number to be >0')).toBe('must be at least 1');
    expect(said('Invalid input')).toBe('is not valid');
  });

  it('the call arguments are named from args, as `flowsync call` prints them', () => {
    const schema = z.strictObject({
      baggage: z.strictObject({ trace_id: z.string() }),
      flows: z.array(z.string()),
    });
    const parsed = schema.safeParse({ baggage: {}, flows: [1] });
    expect(describeIssues(toWireIssues(parsed.error!.issues))).toBe(
      'args.baggage.trace_id: is missing (text is expected); args.flows.0: must be text (it is a number)',
    );
  });
});
