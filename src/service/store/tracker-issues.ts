import {
  PRIORITY_LABELS,
  type TrackerIssue,
  type WebhookAttachmentBody,
  type WebhookIssueData,
} from '../../protocol/index.ts';
import type { ServiceDatabase } from '../db/open.ts';
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
  const words = query.split(/\s+/).filter((word) => /[\p{L}\p{N}]/u.test(word));
  if (words.length === 0) return null;
  return words.map((word) => `"${word.replaceAll('"', '""')}"*`).join(' ');
}

/** The tracker's issues and their attachments, as the webhooks deliver them. */
export class TrackerIssues {
  private readonly statements;

  constructor(db: ServiceDatabase) {
    this.statements = {
      upsert: db.prepare(
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
      ),
      // An identifier moves with its issue (an issue moved to another team gets a new one): free it first.
      releaseIdentifier: db.prepare('DELETE FROM tracker_issues WHERE identifier = ? AND id <> ?'),
      remove: db.prepare('DELETE FROM tracker_issues WHERE id = ?'),
      removeAttachmentsOf: db.prepare('DELETE FROM tracker_attachments WHERE issue_id = ?'),
      byId: db.prepare(`SELECT ${ISSUE_COLUMNS} FROM tracker_issues WHERE id = ?`),
      byIdentifier: db.prepare(
        `SELECT ${ISSUE_COLUMNS} FROM tracker_issues WHERE identifier = ? COLLATE NOCASE`,
      ),
      search: db.prepare(
        `SELECT ${ISSUE_COLUMNS} FROM tracker_issues
         WHERE (@match IS NULL OR seq IN (SELECT rowid FROM tracker_issues_fts WHERE tracker_issues_fts MATCH @match))
           AND (@include_archived OR archived_at IS NULL)
           AND (@after IS NULL OR seq < @after)
           AND (@exclude IS NULL OR id <> @exclude)
         ORDER BY seq DESC LIMIT @limit`,
      ),
      descendants: db.prepare(
        `WITH RECURSIVE tree (id, depth) AS (
           SELECT id, 0 FROM tracker_issues WHERE id = ?
           UNION SELECT child.id, tree.depth + 1 FROM tracker_issues child JOIN tree ON child.parent_id = tree.id
           WHERE tree.depth < 100
         )
         SELECT ${ISSUE_COLUMNS} FROM tracker_issues WHERE id IN (SELECT id FROM tree) AND id <> ? ORDER BY seq`,
      ),
      setStateAndPriority: db.prepare(
        `UPDATE tracker_issues SET state_name = coalesce(@state_name, state_name),
           priority_label = coalesce(@priority_label, priority_label),
           priority = CASE WHEN @priority_label IS NULL THEN priority ELSE @priority END,
           updated_at = @updated_at
         WHERE id = @id`,
      ),
      upsertAttachment: db.prepare(
        `INSERT INTO tracker_attachments (id, issue_id, title, url, data, updated_at)
         VALUES (@id, @issue_id, @title, @url, @data, @updated_at)
         ON CONFLICT (id) DO UPDATE SET issue_id = excluded.issue_id, title = excluded.title, url = excluded.url,
           data = excluded.data, updated_at = excluded.updated_at`,
      ),
      removeAttachment: db.prepare('DELETE FROM tracker_attachments WHERE id = ?'),
      attachmentsOf: db.prepare(
        'SELECT id, issue_id, title, url FROM tracker_attachments WHERE issue_id = ? ORDER BY rowid',
      ),
    };
  }

  /** Stores an issue as the tracker sent it (create or update). */
  save(data: WebhookIssueData, fallbackTeamId: string | null): void {
    const now = nowIso();
    const priority = data.priority ?? null;
    this.statements.releaseIdentifier.run(data.identifier, data.id);
    this.statements.upsert.run({
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
    });
  }

  remove(id: string): void {
    this.statements.removeAttachmentsOf.run(id);
    this.statements.remove.run(id);
  }

  findById(id: string): TrackerIssue | null {
    const row = this.statements.byId.get(id) as IssueRow | undefined;
    return row ? this.toIssue(row) : null;
  }

  findByIdentifier(identifier: string): TrackerIssue | null {
    const row = this.statements.byIdentifier.get(identifier) as IssueRow | undefined;
    return row ? this.toIssue(row) : null;
  }

  /** Sub-issues at any depth, oldest first, so a parent is always listed before its children. */
  descendantsOf(id: string): TrackerIssue[] {
    return (this.statements.descendants.all(id, id) as IssueRow[]).map((row) => this.toIssue(row));
  }

  search({ query, first, after, includeArchived }: IssueSearch) {
    const match = toFtsQuery(query);
    const searching = query.trim() !== '';
    if (searching && match === null)
      return toPage('issues', [] as IssueRow[], first, (row) => this.toIssue(row));
    // The issue whose identifier is the query comes first ("ENG-1" listed ENG-1 after ENG-19…ENG-10), and not
    // again among the rest, which keep the newest-first order their cursor is made of. Not for pages of one: that
    // page's cursor would be the identified issue's, and skip every newer one.
    const exact = searching && first > 1 ? this.identified(query.trim(), includeArchived) : null;
    const head = exact !== null && after === undefined ? [exact] : [];
    const rows = this.statements.search.all({
      match,
      include_archived: includeArchived ? 1 : 0,
      after: after === undefined ? null : decodeCursor('issues', after),
      exclude: exact?.id ?? null,
      limit: first + 1 - head.length,
    }) as IssueRow[];
    return toPage('issues', [...head, ...rows], first, (row) => this.toIssue(row));
  }

  /** The issue whose identifier is exactly this (any case), if the search may list it. */
  private identified(identifier: string, includeArchived: boolean): IssueRow | null {
    const row = this.statements.byIdentifier.get(identifier) as IssueRow | undefined;
    return row && (includeArchived || row.archived_at === null) ? row : null;
  }

  /** Mirrors a task's new status or priority onto its tracker issue, so search shows what the task says. */
  setStateAndPriority(id: string, stateName: string | null, priorityLabel: string | null): void {
    const priority =
      priorityLabel === null ? null : PRIORITY_LABELS.findIndex((label) => label === priorityLabel);
    this.statements.setStateAndPriority.run({
      id,
      state_name: stateName,
      priority_label: priorityLabel,
      priority: priority === null || priority < 0 ? null : priority,
      updated_at: nowIso(),
    });
  }

  saveAttachment({ action, data }: WebhookAttachmentBody): void {
    if (action === 'remove') {
      this.statements.removeAttachment.run(data.id);
      return;
    }
    this.statements.upsertAttachment.run({
      id: data.id,
      issue_id: data.issueId,
      title: data.title ?? null,
      url: data.url ?? null,
      data: JSON.stringify(data),
      updated_at: nowIso(),
    });
  }

  private toIssue({ seq: _seq, ...row }: IssueRow): TrackerIssue {
    const attachments = (this.statements.attachmentsOf.all(row.id) as AttachmentRow[]).map(
      ({ issue_id: _issueId, ...attachment }) => attachment,
    );
    return { ...row, attachments };
  }
}
