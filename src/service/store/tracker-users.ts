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

  findById(id: string): TrackerUser | null {
    return (this.statements.byId.get(id) as TrackerUser | undefined) ?? null;
  }
}
