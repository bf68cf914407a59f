import type { KeyActivityPayload } from '../../protocol/index.ts';
import type { ServiceDatabase } from '../db/open.ts';
import { nowIso } from '../clock.ts';

/** Append-only logs of key activity and slug events. They hold a key's hash and affixes, never the key. */
export class ActivityLogs {
  private readonly insertKeyActivity;
  private readonly insertSlugEvent;

  constructor(db: ServiceDatabase) {
    this.insertKeyActivity = db.prepare(
      `INSERT INTO key_activity_log
         (api_key_tid, type, hash, name, prefix_4, suffix_4, user_id, ts, trace_id, logged_at)
       VALUES (@api_key_tid, @type, @hash, @name, @prefix_4, @suffix_4, @user_id, @ts, @trace_id, @logged_at)`,
    );
    this.insertSlugEvent = db.prepare(
      `INSERT INTO slug_log (slug, type, payload_slug, payload_type, ts, trace_id, logged_at)
       VALUES (@slug, @type, @payload_slug, @payload_type, @ts, @trace_id, @logged_at)`,
    );
  }

  appendKeyActivity(entry: {
    api_key_tid: string;
    ts: number;
    trace_id: string;
    payload: KeyActivityPayload;
  }): number {
    const { lastInsertRowid } = this.insertKeyActivity.run({
      ...entry.payload,
      api_key_tid: entry.api_key_tid,
      ts: entry.ts,
      trace_id: entry.trace_id,
      logged_at: nowIso(),
    });
    return Number(lastInsertRowid);
  }

  appendSlugEvent(entry: {
    slug: string;
    type: string;
    payload: { slug: string; type: string };
    ts: number;
    trace_id: string;
  }): number {
    const { lastInsertRowid } = this.insertSlugEvent.run({
      slug: entry.slug,
      type: entry.type,
      payload_slug: entry.payload.slug,
      payload_type: entry.payload.type,
      ts: entry.ts,
      trace_id: entry.trace_id,
      logged_at: nowIso(),
    });
    return Number(lastInsertRowid);
  }
}
