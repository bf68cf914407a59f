import type { TrackerProject, WebhookProjectData } from '../../protocol/index.ts';
import type { Sql } from '../db/open.ts';
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
  constructor(private readonly sql: Sql) {}

  async save(data: WebhookProjectData): Promise<void> {
    const now = nowIso();
    await this.sql.run(
      `INSERT INTO tracker_projects (id, name, description, state, team_ids, created_at, updated_at, data)
       VALUES (@id, @name, @description, @state, @team_ids, @created_at, @updated_at, @data)
       ON CONFLICT (id) DO UPDATE SET name = excluded.name, description = excluded.description,
         state = excluded.state, team_ids = excluded.team_ids, updated_at = excluded.updated_at,
         data = excluded.data`,
      {
        id: data.id,
        name: data.name,
        description: data.description ?? null,
        state: data.state ?? null,
        team_ids: JSON.stringify(data.teamIds ?? []),
        created_at: data.createdAt ?? now,
        updated_at: data.updatedAt ?? now,
        data: JSON.stringify(data),
      },
    );
  }

  async remove(id: string): Promise<void> {
    await this.sql.run('DELETE FROM tracker_projects WHERE id = ?', [id]);
  }

  async findById(id: string): Promise<TrackerProject | null> {
    const row = await this.sql.get<ProjectRow>(
      `SELECT ${PROJECT_COLUMNS} FROM tracker_projects WHERE id = ?`,
      [id],
    );
    return row ? toProject(row) : null;
  }

  async list(first: number, after: string | undefined) {
    const rows = await this.sql.all<ProjectRow>(
      `SELECT ${PROJECT_COLUMNS} FROM tracker_projects WHERE (CAST(@after AS BIGINT) IS NULL OR seq > @after)
       ORDER BY seq LIMIT @limit`,
      { after: after === undefined ? null : decodeCursor('projects', after), limit: first + 1 },
    );
    return toPage('projects', rows, first, toProject);
  }
}

function toProject({ seq: _seq, team_ids, ...row }: ProjectRow): TrackerProject {
  return { ...row, team_ids: JSON.parse(team_ids) as string[] };
}
