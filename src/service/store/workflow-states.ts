import type { WorkflowState, WorkflowStateCacheValue } from '../../protocol/index.ts';
import type { ServiceDatabase } from '../db/open.ts';
import { nowIso } from '../clock.ts';

/** Each team's workflow states, as the operator last cached them; an upsert replaces the team's whole list. */
export class WorkflowStates {
  private readonly statements;
  private readonly replaceTeam;

  constructor(db: ServiceDatabase) {
    this.statements = {
      upsertTeam: db.prepare(
        `INSERT INTO workflow_state_teams (team_id, updated_at) VALUES (?, ?)
         ON CONFLICT (team_id) DO UPDATE SET updated_at = excluded.updated_at`,
      ),
      clearStates: db.prepare('DELETE FROM workflow_states WHERE team_id = ?'),
      insertState: db.prepare(
        'INSERT INTO workflow_states (team_id, id, name, normalized_name, position) VALUES (?, ?, ?, ?, ?)',
      ),
      team: db.prepare('SELECT updated_at FROM workflow_state_teams WHERE team_id = ?').pluck(),
      states: db.prepare(
        'SELECT id, name, normalized_name FROM workflow_states WHERE team_id = ? ORDER BY position',
      ),
    };
    this.replaceTeam = db.transaction((teamId: string, states: WorkflowState[], updatedAt: string) => {
      this.statements.upsertTeam.run(teamId, updatedAt);
      this.statements.clearStates.run(teamId);
      states.forEach((state, position) =>
        this.statements.insertState.run(teamId, state.id, state.name, state.normalized_name, position),
      );
    });
  }

  replace(teamId: string, states: WorkflowState[]): WorkflowStateCacheValue {
    const updatedAt = nowIso();
    this.replaceTeam(teamId, states, updatedAt);
    return { team_id: teamId, states, updated_at: updatedAt };
  }

  /** A team never cached reads as an empty list with `updated_at: null`, not as an error. */
  get(teamId: string): WorkflowStateCacheValue {
    const updatedAt = (this.statements.team.get(teamId) as string | undefined) ?? null;
    const states = this.statements.states.all(teamId) as WorkflowState[];
    return { team_id: teamId, states, updated_at: updatedAt };
  }
}
