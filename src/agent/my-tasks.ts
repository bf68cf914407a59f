import type { RemoteClient } from '../client/index.ts';
import type { TrackerIssue } from '../protocol/index.ts';

/**
 * The tracker's search has no filter (docs/remote-functions.md: a query and a page), so "my open tasks" reads
 * pages of every issue and keeps those assigned to the key's owner that are not closed. A window page stops once
 * it has PAGE tasks or has read MAX_READS pages; "Load more" goes on from there.
 */
const PAGE = 25;
const READ_SIZE = 250;
const MAX_READS = 8;

/** Workflow states that mean the work is over, by name (the tracker's defaults and their usual spellings). */
const CLOSED_STATES = new Set([
  'done',
  'completed',
  'complete',
  'closed',
  'canceled',
  'cancelled',
  'duplicate',
]);

export function isOpen(issue: TrackerIssue): boolean {
  return issue.archived_at === null && !CLOSED_STATES.has((issue.state_name ?? '').trim().toLowerCase());
}

export async function myOpenTasks(
  client: RemoteClient,
  apiKey: { secret: string; type: 'personal-api-key' },
  after: string | undefined,
) {
  const viewer = await client.tracker.viewer({ api_key: apiKey });
  const nodes: TrackerIssue[] = [];
  let cursor = after;
  let pageInfo = { hasNextPage: false, endCursor: null as string | null };
  for (let read = 0; read < MAX_READS && nodes.length < PAGE; read++) {
    const page = await client.tracker.searchIssues({
      api_key: apiKey,
      query: '',
      pagination: { first: READ_SIZE, ...(cursor !== undefined && { after: cursor }) },
    });
    nodes.push(...page.nodes.filter((issue) => issue.assignee_id === viewer.id && isOpen(issue)));
    pageInfo = { hasNextPage: page.pageInfo.hasNextPage, endCursor: page.pageInfo.endCursor };
    if (!pageInfo.hasNextPage || pageInfo.endCursor === null) break;
    cursor = pageInfo.endCursor;
  }
  return { viewer, nodes, pageInfo };
}
