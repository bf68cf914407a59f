import {
  PRIORITY_LABELS,
  type TrackerIssue,
  type WebhookAttachmentBody,
  type WebhookIssueData,
} from '../../protocol/index.ts';
import type { Sql } from '../db/open.ts';
import { nowIso } from '../clock.ts';
import { decodeCursor, toPage } from './cursor.ts';

interface IssueRow {
  seq: number;
  id: string;
  identifier: string;
  title: string;
  description: string | null;
  priority: number | null;
  priority_label: string | null;
  state_name: string | null;
  team_id: string | null;
  project_id: string | null;
  parent_id: string | null;
  assignee_id: string | null;
  archived_at: string | null;
  created_at: string;
  updated_at: string;
}

interface AttachmentRow {
  id: string;
  issue_id: string;
  title: string | null;
  url: string | null;
}

const ISSUE_COLUMNS = `seq, id, identifier, title, description, priority, priority_label, state_name, team_id,
  project_id, parent_id, assignee_id, archived_at, created_at, updated_at`;

export interface IssueSearch {
  query: string;
  first: number;
  after: string | undefined;
  includeArchived: boolean;
}

/**
 * Turns what a person types into an FTS5 query: every word must match, as a prefix, in identifier, title or
 * description. Each word is quoted so that FTS5 syntax (`AND`, `*`, `"`, `-`) in the input is just text.
 * Returns null for an input with no searchable word.
 */
export function toFtsQuery(query: string): string | null {
  const words = searchWords(query);
  if (words.length === 0) return null;
  return words.map((word) => `"${word.replaceAll('"', '""')}"*`).join(' ');
}

/**
 * The same search for Postgres's `to_tsquery('simple', …)`: the words of each typed word (split as FTS5's
 * unicode61 splits them, on anything not a letter or digit), every one a prefix, all required. Only letters and
 * digits reach Postgres, so its query syntax (`&`, `|`, `!`, `:`, quotes) in the input is just text too.
 */
export function toTsQuery(query: string): string | null {
  const words = searchWords(query).flatMap((word) => word.split(/[^\p{L}\p{N}]+/u).filter(Boolean));
  if (words.length === 0) return null;
  return words.map((word) => `${word.toLowerCase()}:*`).join(' & ');
}

function searchWords(query: string): string[] {
  return query.split(/\s+/).filter((word) => /[\p{L}\p{N}]/u.test(word));
}

/** The tracker's issues and their attachments, as the webhooks deliver them. */
export class TrackerIssues {
  constructor(private readonly sql: Sql) {}

  /** Stores an issue as the tracker sent it (create or update). */
  async save(data: WebhookIssueData, fallbackTeamId: string | null): Promise<void> {
    const now = nowIso();
    const priority = data.priority ?? null;
    // An identifier moves with its issue (an issue moved to another team gets a new one): free it first.
    await this.sql.run('DELETE FROM tracker_issues WHERE identifier = ? AND id <> ?', [
      data.identifier,
      data.id,
    ]);
    await this.sql.run(
      `INSERT INTO tracker_issues (id, identifier, title, description, priority, priority_label, state_name,
         team_id, project_id, parent_id, assignee_id, archived_at, created_at, updated_at, data)
       VALUES (@id, @identifier, @title, @description, @priority, @priority_label, @state_name, @team_id,
         @project_id, @parent_id, @assignee_id, @archived_at, @created_at, @updated_at, @data)
       ON CONFLICT (id) DO UPDATE SET identifier = excluded.identifier, title = excluded.title,
         description = excluded.description, priority = excluded.priority,
         priority_label = excluded.priority_label, state_name = excluded.state_name,
         team_id = excluded.team_id, project_id = excluded.project_id, parent_id = excluded.parent_id,
         assignee_id = excluded.assignee_id, archived_at = excluded.archived_at,
         updated_at = excluded.updated_at, data = excluded.data`,
      {
        id: data.id,
        identifier: data.identifier,
        title: data.title,
        description: data.description ?? null,
        priority,
        priority_label: data.priorityLabel ?? (priority === null ? null : PRIORITY_LABELS[priority]),
        state_name: data.state?.name ?? null,
        team_id: data.teamId ?? data.team?.id ?? fallbackTeamId,
        project_id: data.projectId ?? data.project?.id ?? null,
        parent_id: data.parentId ?? data.parent?.id ?? null,
        assignee_id: data.assigneeId ?? data.assignee?.id ?? null,
        archived_at: data.archivedAt ?? null,
        created_at: data.createdAt ?? now,
        updated_at: data.updatedAt ?? now,
        data: JSON.stringify(data),
      },
    );
  }

  async remove(id: string): Promise<void> {
    await this.sql.run('DELETE FROM tracker_attachments WHERE issue_id = ?', [id]);
    await this.sql.run('DELETE FROM tracker_issues WHERE id = ?', [id]);
  }

  async findById(id: string): Promise<TrackerIssue | null> {
    const row = await this.sql.get<IssueRow>(`SELECT ${ISSUE_COLUMNS} FROM tracker_issues WHERE id = ?`, [
      id,
    ]);
    return row ? this.toIssue(row) : null;
  }

  async findByIdentifier(identifier: string): Promise<TrackerIssue | null> {
    const row = await this.byIdentifier(identifier);
    return row ? this.toIssue(row) : null;
  }

  /** In any case (ENG-1, eng-1): lower() on both sides, which both databases index (migrations). */
  private byIdentifier(identifier: string) {
    return this.sql.get<IssueRow>(
      `SELECT ${ISSUE_COLUMNS} FROM tracker_issues WHERE lower(identifier) = lower(?)`,
      [identifier],
    );
  }

  /** Sub-issues at any depth, oldest first, so a parent is always listed before its children. */
  async descendantsOf(id: string): Promise<TrackerIssue[]> {
    const rows = await this.sql.all<IssueRow>(
      `WITH RECURSIVE tree (id, depth) AS (
         SELECT id, 0 FROM tracker_issues WHERE id = ?
         UNION SELECT child.id, tree.depth + 1 FROM tracker_issues child JOIN tree ON child.parent_id = tree.id
         WHERE tree.depth < 100
       )
       SELECT ${ISSUE_COLUMNS} FROM tracker_issues WHERE id IN (SELECT id FROM tree) AND id <> ? ORDER BY seq`,
      [id, id],
    );
    return Promise.all(rows.map((row) => this.toIssue(row)));
  }

  async search({ query, first, after, includeArchived }: IssueSearch) {
    const postgres = this.sql.dialect === 'postgres';
    const match = postgres ? toTsQuery(query) : toFtsQuery(query);
    const searching = query.trim() !== '';
    const toIssues = async (rows: IssueRow[]) => {
      const page = toPage('issues', rows, first, (row) => row);
      return { ...page, nodes: await Promise.all(page.nodes.map((row) => this.toIssue(row))) };
    };
    if (searching && match === null) return toIssues([]);
    // The issue whose identifier is the query comes first ("ENG-1" listed ENG-1 after ENG-19…ENG-10), and not
    // again among the rest, which keep the newest-first order their cursor is made of. Not for pages of one: that
    // page's cursor would be the identified issue's, and skip every newer one.
    const exact = searching && first > 1 ? await this.identified(query.trim(), includeArchived) : null;
    const head = exact !== null && after === undefined ? [exact] : [];
    const matching = postgres
      ? "words @@ to_tsquery('simple', @match)"
      : 'seq IN (SELECT rowid FROM tracker_issues_fts WHERE tracker_issues_fts MATCH @match)';
    const rows = await this.sql.all<IssueRow>(
      `SELECT ${ISSUE_COLUMNS} FROM tracker_issues
       WHERE (CAST(@match AS TEXT) IS NULL OR ${matching})
         AND (@include_archived = 1 OR archived_at IS NULL)
         AND (CAST(@after AS BIGINT) IS NULL OR seq < @after)
         AND (CAST(@exclude AS TEXT) IS NULL OR id <> @exclude)
       ORDER BY seq DESC LIMIT @limit`,
      {
        match,
        include_archived: includeArchived ? 1 : 0,
        after: after === undefined ? null : decodeCursor('issues', after),
        exclude: exact?.id ?? null,
        limit: first + 1 - head.length,
      },
    );
    return toIssues([...head, ...rows]);
  }

  /** The issue whose identifier is exactly this (any case), if the search may list it. */
  private async identified(identifier: string, includeArchived: boolean): Promise<IssueRow | null> {
    const row = await this.byIdentifier(identifier);
    return row && (includeArchived || row.archived_at === null) ? row : null;
  }

  /** Mirrors a task's new status or priority onto its tracker issue, so search shows what the task says. */
  async setStateAndPriority(
    id: string,
    stateName: string | null,
    priorityLabel: string | null,
  ): Promise<void> {
    const priority =
      priorityLabel === null ? null : PRIORITY_LABELS.findIndex((label) => label === priorityLabel);
    await this.sql.run(
      `UPDATE tracker_issues SET state_name = coalesce(@state_name, state_name),
         priority_label = coalesce(@priority_label, priority_label),
         priority = CASE WHEN CAST(@priority_label AS TEXT) IS NULL THEN priority ELSE @priority END,
         updated_at = @updated_at
       WHERE id = @id`,
      {
        id,
        state_name: stateName,
        priority_label: priorityLabel,
        priority: priority === null || priority < 0 ? null : priority,
        updated_at: nowIso(),
      },
    );
  }

  async saveAttachment({ action, data }: WebhookAttachmentBody): Promise<void> {
    if (action === 'remove') {
      await this.sql.run('DELETE FROM tracker_attachments WHERE id = ?', [data.id]);
      return;
    }
    await this.sql.run(
      `INSERT INTO tracker_attachments (id, issue_id, title, url, data, updated_at)
       VALUES (@id, @issue_id, @title, @url, @data, @updated_at)
       ON CONFLICT (id) DO UPDATE SET issue_id = excluded.issue_id, title = excluded.title, url = excluded.url,
         data = excluded.data, updated_at = excluded.updated_at`,
      {
        id: data.id,
        issue_id: data.issueId,
        title: data.title ?? null,
        url: data.url ?? null,
        data: JSON.stringify(data),
        updated_at: nowIso(),
      },
    );
  }

  private async toIssue({ seq: _seq, ...row }: IssueRow): Promise<TrackerIssue> {
    const attachments = await this.sql.all<AttachmentRow>(
      'SELECT id, issue_id, title, url FROM tracker_attachments WHERE issue_id = ? ORDER BY rowid',
      [row.id],
    );
    return { ...row, attachments: attachments.map(({ issue_id: _issueId, ...attachment }) => attachment) };
  }
}
