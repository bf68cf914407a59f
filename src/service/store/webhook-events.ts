import type { Sql } from '../db/open.ts';
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
  constructor(private readonly sql: Sql) {}

  async append(event: WebhookEvent): Promise<number> {
    const row = await this.sql.get<{ id: number }>(
      `INSERT INTO webhook_events (team, status, type, action, applied, payload, trace_id, received_at)
       VALUES (@team, @status, @type, @action, @applied, @payload, @trace_id, @received_at) RETURNING id`,
      {
        team: event.team,
        status: event.status,
        type: event.type,
        action: event.action,
        trace_id: event.trace_id,
        applied: event.applied ? 1 : 0,
        payload: JSON.stringify(event.payload) ?? 'null',
        received_at: nowIso(),
      },
    );
    return row!.id;
  }
}
