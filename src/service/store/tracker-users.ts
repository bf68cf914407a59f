import type { TrackerUser, WebhookUserData } from '../../protocol/index.ts';
import type { ServiceDatabase } from '../db/open.ts';

/** The tracker's users, as the webhooks deliver them; a registered API key names one of them. */
export class TrackerUsers {
  private readonly statements;

  constructor(db: ServiceDatabase) {
    this.statements = {
      upsert: db.prepare(
        `INSERT INTO tracker_users (id, name, email, data) VALUES (@id, @name, @email, @data)
         ON CONFLICT (id) DO UPDATE SET name = excluded.name, email = excluded.email, data = excluded.data`,
      ),
      remove: db.prepare('DELETE FROM tracker_users WHERE id = ?'),
      byId: db.prepare('SELECT id, name, email FROM tracker_users WHERE id = ?'),
      // Named users first, by name; those the tracker sent without a name after them, by id.
      list: db.prepare(
        `SELECT id, name, email FROM tracker_users ORDER BY name IS NULL, name COLLATE NOCASE, id LIMIT ?`,
      ),
      byEmail: db.prepare(
        `SELECT id, name, email FROM tracker_users WHERE lower(trim(email)) = ?
         ORDER BY name IS NULL, name COLLATE NOCASE, id LIMIT ?`,
      ),
    };
  }

  save(data: WebhookUserData): void {
    this.statements.upsert.run({
      id: data.id,
      name: data.name ?? null,
      email: data.email ?? null,
      data: JSON.stringify(data),
    });
  }

  remove(id: string): void {
    this.statements.remove.run(id);
  }

  /** Up to `max` users, or those whose email is `email` (compared trimmed and in lower case). */
  list(max: number, email?: string): TrackerUser[] {
    return (
      email === undefined
        ? this.statements.list.all(max)
        : this.statements.byEmail.all(email.trim().toLowerCase(), max)
    ) as TrackerUser[];
  }

  findById(id: string): TrackerUser | null {
    return (this.statements.byId.get(id) as TrackerUser | undefined) ?? null;
  }
}
