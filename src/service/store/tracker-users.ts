import type { TrackerUser, WebhookUserData } from '../../protocol/index.ts';
import type { Sql } from '../db/open.ts';

/** The tracker's users, as the webhooks deliver them; a registered API key names one of them. */
export class TrackerUsers {
  constructor(private readonly sql: Sql) {}

  async save(data: WebhookUserData): Promise<void> {
    await this.sql.run(
      `INSERT INTO tracker_users (id, name, email, data) VALUES (@id, @name, @email, @data)
       ON CONFLICT (id) DO UPDATE SET name = excluded.name, email = excluded.email, data = excluded.data`,
      { id: data.id, name: data.name ?? null, email: data.email ?? null, data: JSON.stringify(data) },
    );
  }

  async remove(id: string): Promise<void> {
    await this.sql.run('DELETE FROM tracker_users WHERE id = ?', [id]);
  }

  /**
   * Up to `max` users, or those whose email is `email` (compared trimmed and in lower case). Named users first,
   * by name in any case; those the tracker sent without a name after them, by id.
   */
  list(max: number, email?: string): Promise<TrackerUser[]> {
    const order = 'ORDER BY name IS NULL, lower(name), id LIMIT ?';
    return email === undefined
      ? this.sql.all<TrackerUser>(`SELECT id, name, email FROM tracker_users ${order}`, [max])
      : this.sql.all<TrackerUser>(
          `SELECT id, name, email FROM tracker_users WHERE lower(trim(email)) = ? ${order}`,
          [email.trim().toLowerCase(), max],
        );
  }

  async findById(id: string): Promise<TrackerUser | null> {
    const found = await this.sql.get<TrackerUser>('SELECT id, name, email FROM tracker_users WHERE id = ?', [
      id,
    ]);
    return found ?? null;
  }
}
