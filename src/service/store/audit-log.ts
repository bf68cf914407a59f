import type { AuditEvent } from '../../protocol/index.ts';
import type { Sql } from '../db/open.ts';
import { nowIso } from '../clock.ts';
import { sha256Hex } from '../hash.ts';

/** The hash the first row links to. */
export const AUDIT_GENESIS = '0'.repeat(64);

/**
 * Who an event is by: a member's credential (always the service's word, never the client's label), someone with
 * the database itself (`--db`: `user@host`), or the service itself (the size cap).
 */
export type AuditActor = { memberId: string; tokenId: string | null } | { local: string } | { system: true };

export interface AuditEntry {
  action: string;
  /** What it acted on, in a person's words: `acme/app flows/ci/.env`, `bob`, `fsm_3kT9xQ2mB7`. */
  target: string | null;
  detail: Record<string, unknown>;
  traceId: string | null;
}

interface AuditRow {
  id: number | string;
  at: string;
  actor_member_id: string | null;
  actor_token_id: string | null;
  actor_local: string | null;
  action: string;
  target: string | null;
  detail: string | null;
  trace_id: string | null;
  prev_sha256: string;
  sha256: string;
}

/** What a row's hash covers: every field and the hash of the row before it. */
export function auditHash(row: Omit<AuditRow, 'sha256'>): string {
  return sha256Hex(
    JSON.stringify([
      row.prev_sha256,
      Number(row.id),
      row.at,
      row.actor_member_id,
      row.actor_token_id,
      row.actor_local,
      row.action,
      row.target,
      row.detail,
      row.trace_id,
    ]),
  );
}

/** Rows read at a time by `verify` and `list`. */
const PAGE = 1000;

/**
 * The audit log: operator actions and mass changes, append-only (no function updates or deletes a row),
 * each row's SHA-256 covering its fields and the row before's, written under one lock so the chain has no fork.
 * It cannot stop someone who writes the database itself; `verify` names the first row that was changed, removed
 * or put in. Not a transaction itself: an event is written in the transaction of the change it records.
 */
export class AuditLog {
  constructor(private readonly sql: Sql) {}

  async append(actor: AuditActor, entry: AuditEntry, now = nowIso()): Promise<void> {
    await this.sql.lock('audit log');
    const last = await this.sql.get<{ id: number | string; sha256: string }>(
      'SELECT id, sha256 FROM audit_events ORDER BY id DESC LIMIT 1',
    );
    const row: Omit<AuditRow, 'sha256'> = {
      id: Number(last?.id ?? 0) + 1,
      at: now,
      actor_member_id: 'memberId' in actor ? actor.memberId : null,
      actor_token_id: 'memberId' in actor ? actor.tokenId : null,
      actor_local: 'local' in actor ? actor.local : 'system' in actor ? 'system' : null,
      action: entry.action,
      target: entry.target,
      detail: JSON.stringify(entry.detail),
      trace_id: entry.traceId,
      prev_sha256: last?.sha256 ?? AUDIT_GENESIS,
    };
    await this.sql.run(
      `INSERT INTO audit_events
         (id, at, actor_member_id, actor_token_id, actor_local, action, target, detail, trace_id, prev_sha256, sha256)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      [
        row.id,
        row.at,
        row.actor_member_id,
        row.actor_token_id,
        row.actor_local,
        row.action,
        row.target,
        row.detail,
        row.trace_id,
        row.prev_sha256,
        auditHash(row),
      ],
    );
  }

  /** Events newest first, after `since` (an ISO time) when given, at most `limit`; the actor named as now. */
  async list(filter: { since: string | null; action: string | null; limit: number }): Promise<AuditEvent[]> {
    const rows = await this.sql.all<AuditRow & { member_name: string | null; member_role: string | null }>(
      `SELECT a.id, a.at, a.actor_member_id, a.actor_token_id, a.actor_local, a.action, a.target, a.detail,
         a.trace_id, a.prev_sha256, a.sha256, m.name AS member_name, m.role AS member_role
       FROM audit_events a LEFT JOIN members m ON m.id = a.actor_member_id
       WHERE a.at >= @since AND (CAST(@action AS TEXT) IS NULL OR a.action = @action)
       ORDER BY a.id DESC LIMIT @limit`,
      { since: filter.since ?? '', action: filter.action, limit: Math.min(filter.limit, PAGE) },
    );
    return rows.map((row) => ({
      id: Number(row.id),
      at: row.at,
      actor:
        row.actor_member_id !== null
          ? { member: row.member_name ?? row.actor_member_id, role: row.member_role, local: null }
          : { member: null, role: null, local: row.actor_local },
      token: row.actor_token_id,
      action: row.action,
      target: row.target,
      detail: parseDetail(row.detail),
      trace_id: row.trace_id,
    }));
  }

  /**
   * Recomputes the chain from the first row: the first row whose hash does not cover its fields (changed) or whose
   * link is not the hash of the row before it (a row removed, or put in), or null when every row checks out.
   */
  async verify(): Promise<{ rows: number; broken: { id: number; why: string } | null }> {
    let expected = AUDIT_GENESIS;
    let after = 0;
    let rows = 0;
    for (;;) {
      const page = await this.sql.all<AuditRow>(
        `SELECT id, at, actor_member_id, actor_token_id, actor_local, action, target, detail, trace_id,
           prev_sha256, sha256 FROM audit_events WHERE id > ? ORDER BY id LIMIT ${PAGE}`,
        [after],
      );
      if (page.length === 0) return { rows, broken: null };
      for (const row of page) {
        const id = Number(row.id);
        if (row.prev_sha256 !== expected)
          return {
            rows,
            broken: { id, why: 'its link to the row before does not match (a row removed or put in)' },
          };
        const { sha256, ...fields } = row;
        if (auditHash(fields) !== sha256)
          return { rows, broken: { id, why: 'its fields do not match its hash (the row was changed)' } };
        expected = sha256;
        after = id;
        rows++;
      }
    }
  }
}

function parseDetail(text: string | null): Record<string, unknown> {
  if (text === null) return {};
  try {
    const parsed: unknown = JSON.parse(text);
    return typeof parsed === 'object' && parsed !== null ? (parsed as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}
