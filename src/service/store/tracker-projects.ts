import type { TrackerProject, WebhookProjectData } from '../../protocol/index.ts';
import type { ServiceDatabase } from '../db/open.ts';
import { nowIso } from '../clock.ts';
import { decodeCursor, toPage } from './cursor.ts';

interface ProjectRow {
  seq: number;
  id: string;
  name: string;
  description: string | null;
  state: string | null;
  team_ids: string;
  created_at: string;
  updated_at: string;
}

const PROJECT_COLUMNS = 'seq, id, name, description, state, team_ids, created_at, updated_at';

/** The tracker's projects, as the webhooks deliver them; listed in the order they arrived. */
export class TrackerProjects {
  private readonly statements;

  constructor(db: ServiceDatabase) {
    this.statements = {
      upsert: db.prepare(
        `INSERT INTO tracker_projects (id, name, description, state, team_ids, created_at, updated_at, data)
         VALUES (@id, @name, @description, @state, @team_ids, @created_at, @updated_at, @data)
         ON CONFLICT (id) DO UPDATE SET name = excluded.name, description = excluded.description,
           state = excluded.state, team_ids = excluded.team_ids, updated_at = excluded.updated_at,
           data = excluded.data`,
      ),
      remove: db.prepare('DELETE FROM tracker_projects WHERE id = ?'),
      byId: db.prepare(`SELECT ${PROJECT_COLUMNS} FROM tracker_projects WHERE id = ?`),
      list: db.prepare(
        `SELECT ${PROJECT_COLUMNS} FROM tracker_projects WHERE (@after IS NULL OR seq > @after)
         ORDER BY seq LIMIT @limit`,
      ),
    };
  }

  save(data: WebhookProjectData): void {
    const now = nowIso();
    this.statements.upsert.run({
      id: data.id,
      name: data.name,
      description: data.description ?? null,
      state: data.state ?? null,
      team_ids: JSON.stringify(data.teamIds ?? []),
      created_at: data.createdAt ?? now,
      updated_at: data.updatedAt ?? now,
      data: JSON.stringify(data),
    });
  }

  remove(id: string): void {
    this.statements.remove.run(id);
  }

  findById(id: string): TrackerProject | null {
    const row = this.statements.byId.get(id) as ProjectRow | undefined;
    return row ? toProject(row) : null;
  }

  list(first: number, after: string | undefined) {
    const rows = this.statements.list.all({
      after: after === undefined ? null : decodeCursor('projects', after),
      limit: first + 1,
    }) as ProjectRow[];
    return toPage('projects', rows, first, toProject);
  }
}

function toProject({ seq: _seq, team_ids, ...row }: ProjectRow): TrackerProject {
  return { ...row, team_ids: JSON.parse(team_ids) as string[] };
}
