import { useInfiniteQuery, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useRef, useState, type FormEvent } from 'react';
import type { AgentApi, AgentApiOutput } from '../../../src/window/index.ts';
import { trackerUserName, type TrackerIssue } from '../../../src/protocol/index.ts';
import { plural } from '../plural.ts';
import { ErrorLine, type ScreenProps } from './common.tsx';

const PRIORITIES = ['No priority', 'Urgent', 'High', 'Medium', 'Low'];

export function TasksScreen({ api }: ScreenProps) {
  const [typed, setTyped] = useState('');
  // null: the viewer's own open tasks, what the screen opens on; a string: a search of the tracker.
  const [query, setQuery] = useState<string | null>(null);
  const [open, setOpen] = useState<TrackerIssue | null>(null);
  const results = useInfiniteQuery({
    queryKey: ['tasks', query],
    initialPageParam: undefined as string | undefined,
    queryFn: async ({ pageParam }) =>
      query === null
        ? api.myTasks({ after: pageParam })
        : { viewer: null, ...(await api.searchTasks({ query, first: 25, after: pageParam })) },
    getNextPageParam: (page) =>
      page.pageInfo.hasNextPage ? (page.pageInfo.endCursor ?? undefined) : undefined,
  });
  const onSearch = (event: FormEvent) => {
    event.preventDefault();
    setQuery(typed);
  };
  const issues = results.data?.pages.flatMap((page) => page.nodes) ?? [];
  const viewer = results.data?.pages[0]?.viewer;

  return (
    <section aria-labelledby="tasks-title">
      <h2 id="tasks-title">Tasks</h2>
      <form role="search" onSubmit={onSearch} className="row">
        <label htmlFor="task-query">Search the tracker</label>
        <input id="task-query" value={typed} onChange={(event) => setTyped(event.target.value)} />
        <button type="submit">Search</button>
        {query !== null && (
          <button type="button" onClick={() => setQuery(null)}>
            My open tasks
          </button>
        )}
      </form>
      <div className={open ? 'tasks two-columns' : 'tasks'}>
        <div>
          <h3 id="task-list-title">
            {query === null
              ? `Open tasks assigned to ${viewer?.name ?? viewer?.email ?? 'you'}`
              : `Tasks matching “${query}”`}
          </h3>
          {query === null && viewer && <WhoYouAre viewer={viewer} />}
          <ErrorLine error={results.error} />
          {results.isSuccess && issues.length === 0 && (
            <p>{query === null ? 'No open task is assigned to you.' : 'No task matches.'}</p>
          )}
          {issues.length > 0 && (
            <table aria-labelledby="task-list-title">
              <thead>
                <tr>
                  <th scope="col">Key</th>
                  <th scope="col">Title</th>
                  <th scope="col">Status</th>
                  <th scope="col">Priority</th>
                  <th scope="col">
                    <span className="visually-hidden">Open</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {issues.map((issue) => (
                  <tr key={issue.id} aria-current={issue.identifier === open?.identifier || undefined}>
                    <td>{issue.identifier}</td>
                    <td>{issue.title}</td>
                    <td>{issue.state_name ?? '—'}</td>
                    <td>{issue.priority_label ?? '—'}</td>
                    <td>
                      <button
                        id={`open-${issue.identifier}`}
                        onClick={() => setOpen(issue)}
                        aria-label={`Open ${issue.identifier}`}
                      >
                        Open
                      </button>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
          {results.hasNextPage && (
            <button onClick={() => void results.fetchNextPage()} disabled={results.isFetchingNextPage}>
              Load more
            </button>
          )}
        </div>
        {open && (
          <TaskPanel
            key={open.identifier}
            api={api}
            issue={open}
            onSaved={() => void results.refetch()}
            onClose={() => {
              document.getElementById(`open-${open.identifier}`)?.focus();
              setOpen(null);
            }}
          />
        )}
      </div>
    </section>
  );
}

/**
 * Whose tasks these are: the tracker user the personal API key belongs to. One the tracker never named (a key
 * registered to an OS user name) has no tasks: said, with where to fix it.
 */
function WhoYouAre({ viewer }: { viewer: AgentApiOutput<'myTasks'>['viewer'] }) {
  if (viewer.name === null && viewer.email === null)
    return (
      <p className="error" data-testid="you">
        Your personal API key is registered to “{viewer.id}”, whom the tracker does not know: pick who you are
        in Settings.
      </p>
    );
  return (
    <p className="muted" data-testid="you">
      You are {trackerUserName(viewer)} in the tracker.
    </p>
  );
}

type OpenedTask = AgentApiOutput<'openTask'>;

/**
 * One task beside the list (it stays in view while the list scrolls: CSS `position: sticky`), focused when it
 * opens so that a keyboard or screen reader user lands on it.
 */
function TaskPanel(props: { api: AgentApi; issue: TrackerIssue; onSaved: () => void; onClose: () => void }) {
  const { api, issue } = props;
  const taskKey = issue.identifier;
  const queries = useQueryClient();
  const task = useQuery({ queryKey: ['task', taskKey], queryFn: () => api.openTask({ taskKey }) });
  const teamId = task.data?.task.team_id ?? null;
  const states = useQuery({
    queryKey: ['states', taskKey, teamId],
    enabled: task.data !== undefined,
    queryFn: () => api.workflowStates({ taskKey, teamId }),
  });
  const noStates = states.data !== undefined && states.data.states.length === 0;
  const [status, setStatus] = useState('');
  const [priority, setPriority] = useState('');
  const [recursive, setRecursive] = useState(false);
  const update = useMutation({
    mutationFn: () =>
      api.updateTask({
        taskKey,
        status: status || undefined,
        priority: priority || undefined,
        recursive,
      }),
    onSuccess: (result) => {
      // The header shows the task as the service has it now; the list reloads to match.
      queries.setQueryData(['task', taskKey], (old: OpenedTask | undefined) =>
        old ? { ...old, task: result.task } : old,
      );
      setStatus('');
      setPriority('');
      props.onSaved();
    },
  });
  // A change after a save makes its "Updated …" line stale.
  const edit =
    <T,>(set: (value: T) => void) =>
    (value: T) => {
      set(value);
      if (!update.isPending) update.reset();
    };
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => heading.current?.focus(), []);
  const onSubmit = (event: FormEvent) => {
    event.preventDefault();
    update.mutate();
  };
  const current = task.data?.task;
  const subTasks = task.data?.synced.length ?? 0;

  return (
    <section className="panel task-detail" aria-labelledby="task-title" data-testid="task-detail">
      <div className="row spread">
        <h3 id="task-title" tabIndex={-1} ref={heading}>
          {taskKey}
          {current && ` · ${current.status ?? 'no status'}`}
        </h3>
        <button type="button" onClick={props.onClose} aria-label={`Close ${taskKey}`}>
          Close
        </button>
      </div>
      <p className="task-title">{issue.title}</p>
      <div className="description" aria-label="Description">
        {issue.description?.trim() ? issue.description : <span className="muted">No description.</span>}
      </div>
      <ErrorLine error={task.error} />
      {!task.data && !task.error && <p className="muted">Opening {taskKey}…</p>}
      {current && (
        <form onSubmit={onSubmit}>
          <p className="muted">
            Priority: {current.priority ?? 'none'}
            {subTasks > 0 ? ` · with ${plural(subTasks, 'sub-task')}` : ''}
          </p>
          <label htmlFor="task-status">Status</label>
          <select
            id="task-status"
            value={status}
            onChange={(event) => edit(setStatus)(event.target.value)}
            aria-describedby={noStates ? 'task-status-none' : undefined}
          >
            <option value="">(unchanged)</option>
            {(states.data?.states ?? []).map((state) => (
              <option key={state.id} value={state.name}>
                {state.name}
              </option>
            ))}
          </select>
          {noStates && (
            // Without states the menu can offer nothing; an operator fills the cache (README, "call").
            <p className="muted" id="task-status-none" data-testid="no-states">
              No workflow states cached for team {states.data?.team_id}: the status cannot be changed here
              until an operator caches them (workflow_state_cache_upsert).
            </p>
          )}
          <ErrorLine error={states.error} />
          <label htmlFor="task-priority">Priority</label>
          <select
            id="task-priority"
            value={priority}
            onChange={(event) => edit(setPriority)(event.target.value)}
          >
            <option value="">(unchanged)</option>
            {PRIORITIES.map((label) => (
              <option key={label}>{label}</option>
            ))}
          </select>
          <label className="check">
            <input
              type="checkbox"
              checked={recursive}
              onChange={(event) => edit(setRecursive)(event.target.checked)}
            />
            Also its sub-tasks
          </label>
          <div className="row">
            <button type="submit" disabled={update.isPending || (!status && !priority)}>
              {update.isPending ? 'Saving…' : 'Save'}
            </button>
          </div>
          {update.isSuccess && <p role="status">Updated {update.data.updated.join(', ')}.</p>}
          <ErrorLine error={update.error} />
        </form>
      )}
    </section>
  );
}
