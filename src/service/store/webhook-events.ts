import type { ServiceDatabase } from '../db/open.ts';
import { nowIso } from '../clock.ts';

export interface WebhookEvent {
  team: string;
  status: string;
  type: string;
  action: string;
  applied: boolean;
  payload: unknown;
  trace_id: string;
}

/** Every webhook delivery as received, applied or not: the record to replay or debug from. */
export class WebhookEvents {
  private readonly insert;

  constructor(db: ServiceDatabase) {
    this.insert = db.prepare(
      `INSERT INTO webhook_events (team, status, type, action, applied, payload, trace_id, received_at)
       VALUES (@team, @status, @type, @action, @applied, @payload, @trace_id, @received_at)`,
    );
  }

  append(event: WebhookEvent): number {
    const { lastInsertRowid } = this.insert.run({
      ...event,
      applied: event.applied ? 1 : 0,
      payload: JSON.stringify(event.payload) ?? 'null',
      received_at: nowIso(),
    });
    return Number(lastInsertRowid);
  }
}
