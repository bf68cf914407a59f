import type { KeyActivityPayload } from '../../protocol/index.ts';
import type { Sql } from '../db/open.ts';
import { nowIso } from '../clock.ts';

/** Append-only logs of key activity and slug events. They hold a key's hash and affixes, never the key. */
export class ActivityLogs {
  constructor(private readonly sql: Sql) {}

  async appendKeyActivity(entry: {
    api_key_tid: string;
    ts: number;
    trace_id: string;
    payload: KeyActivityPayload;
  }): Promise<number> {
    const row = await this.sql.get<{ id: number }>(
      `INSERT INTO key_activity_log
         (api_key_tid, type, hash, name, prefix_4, suffix_4, user_id, ts, trace_id, logged_at)
       VALUES (@api_key_tid, @type, @hash, @name, @prefix_4, @suffix_4, @user_id, @ts, @trace_id, @logged_at)
       RETURNING id`,
      {
        api_key_tid: entry.api_key_tid,
        type: entry.payload.type,
        hash: entry.payload.hash,
        name: entry.payload.name,
        prefix_4: entry.payload.prefix_4,
        suffix_4: entry.payload.suffix_4,
        user_id: entry.payload.user_id,
        ts: entry.ts,
        trace_id: entry.trace_id,
        logged_at: nowIso(),
      },
    );
    return row!.id;
  }

  async appendSlugEvent(entry: {
    slug: string;
    type: string;
    payload: { slug: string; type: string };
    ts: number;
    trace_id: string;
  }): Promise<number> {
    const row = await this.sql.get<{ id: number }>(
      `INSERT INTO slug_log (slug, type, payload_slug, payload_type, ts, trace_id, logged_at)
       VALUES (@slug, @type, @payload_slug, @payload_type, @ts, @trace_id, @logged_at) RETURNING id`,
      {
        slug: entry.slug,
        type: entry.type,
        payload_slug: entry.payload.slug,
        payload_type: entry.payload.type,
        ts: entry.ts,
        trace_id: entry.trace_id,
        logged_at: nowIso(),
      },
    );
    return row!.id;
  }
}
