import { describe, expect, it } from 'vitest';
import { teamKeyOf, workflowStateTeams } from '../../src/protocol/index.ts';

describe('where a task’s workflow states are cached (issue 42: states under the team key ENG were never read)', () => {
  it.each([
    ['ENG-123', 'ENG'],
    ['eng-1', 'eng'],
    ['WEB2-7', 'WEB2'],
    [' ENG-1 ', 'ENG'],
    ['ENG', null],
    ['ENG-', null],
    ['123-4', null],
    ['ENG-12a', null],
  ])('the team key of %j is %j', (taskKey, key) => {
    expect(teamKeyOf(taskKey)).toBe(key);
  });

  it.each([
    [{ task_key: 'ENG-1', team_id: 'team-uuid-1' }, ['team-uuid-1', 'ENG']],
    [{ task_key: 'ENG-1', team_id: null }, ['ENG']],
    [{ task_key: 'ENG-1', team_id: 'ENG' }, ['ENG']],
    [{ task_key: 'odd', team_id: 'team-uuid-1' }, ['team-uuid-1']],
    [{ task_key: 'odd', team_id: null }, []],
  ])('%j is looked up under %j, in that order', (task, teams) => {
    expect(workflowStateTeams(task)).toEqual(teams);
  });
});
