import type { WorkflowState, WorkflowStateCacheValue } from '../../protocol/index.ts';
import type { Sql } from '../db/open.ts';
import { nowIso } from '../clock.ts';

/** Each team's workflow states, as the operator last cached them; an upsert replaces the team's whole list. */
export class WorkflowStates {
  constructor(private readonly sql: Sql) {}

  /** Not a transaction itself: the function that calls it wraps the call in one. */
  async replace(teamId: string, states: WorkflowState[]): Promise<WorkflowStateCacheValue> {
    const updatedAt = nowIso();
    // Two replacements of one team at once would each delete, then both insert.
    await this.sql.lock(`workflow states ${teamId}`);
    await this.sql.run(
      `INSERT INTO workflow_state_teams (team_id, updated_at) VALUES (?, ?)
       ON CONFLICT (team_id) DO UPDATE SET updated_at = excluded.updated_at`,
      [teamId, updatedAt],
    );
    await this.sql.run('DELETE FROM workflow_states WHERE team_id = ?', [teamId]);
    for (const [position, state] of states.entries()) {
      await this.sql.run(
        'INSERT INTO workflow_states (team_id, id, name, normalized_name, position) VALUES (?, ?, ?, ?, ?)',
        [teamId, state.id, state.name, state.normalized_name, position],
      );
    }
    return { team_id: teamId, states, updated_at: updatedAt };
  }

  /** A team never cached reads as an empty list with `updated_at: null`, not as an error. */
  async get(teamId: string): Promise<WorkflowStateCacheValue> {
    const team = await this.sql.get<{ updated_at: string }>(
      'SELECT updated_at FROM workflow_state_teams WHERE team_id = ?',
      [teamId],
    );
    const states = await this.sql.all<WorkflowState>(
      'SELECT id, name, normalized_name FROM workflow_states WHERE team_id = ? ORDER BY position',
      [teamId],
    );
    return { team_id: teamId, states, updated_at: team?.updated_at ?? null };
  }
}
