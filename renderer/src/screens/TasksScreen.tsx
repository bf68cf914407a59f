import { useInfiniteQuery, useMutation, useQuery } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import type { AgentApi } from '../../../src/agent/index.ts';
import { ErrorLine, type ScreenProps } from './common.tsx';

const PRIORITIES = ['No priority', 'Urgent', 'High', 'Medium', 'Low'];

export function TasksScreen({ api }: ScreenProps) {
  const [typed, setTyped] = useState('');
  const [query, setQuery] = useState<string | null>(null);
  const [openKey, setOpenKey] = useState<string | null>(null);
  const results = useInfiniteQuery({
    queryKey: ['tasks', query],
    enabled: query !== null,
    initialPageParam: undefined as string | undefined,
    queryFn: ({ pageParam }) => api.searchTasks({ query: query ?? '', first: 25, after: pageParam }),
    getNextPageParam: (page) =>
      page.pageInfo.hasNextPage ? (page.pageInfo.endCursor ?? undefined) : undefined,
  });
  const onSearch = (event: FormEvent) => {
    event.preventDefault();
    setQuery(typed);
  };
  const issues = results.data?.pages.flatMap((page) => page.nodes) ?? [];

  return (
    <section aria-labelledby="tasks-title">
      <h2 id="tasks-title">Tasks</h2>
      <form role="search" onSubmit={onSearch} className="row">
        <label htmlFor="task-query">Search the tracker</label>
        <input id="task-query" value={typed} onChange={(event) => setTyped(event.target.value)} />
        <button type="submit">Search</button>
      </form>
      <ErrorLine error={results.error} />
      {query !== null && results.isSuccess && issues.length === 0 && <p>No task matches.</p>}
      {issues.length > 0 && (
        <table>
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
              <tr key={issue.id}>
                <td>{issue.identifier}</td>
                <td>{issue.title}</td>
                <td>{issue.state_name ?? '—'}</td>
                <td>{issue.priority_label ?? '—'}</td>
                <td>
                  <button
                    onClick={() => setOpenKey(issue.identifier)}
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
      {openKey && (
        <TaskPanel key={openKey} api={api} taskKey={openKey} onDone={() => void results.refetch()} />
      )}
    </section>
  );
}

function TaskPanel({ api, taskKey, onDone }: { api: AgentApi; taskKey: string; onDone: () => void }) {
  const task = useQuery({ queryKey: ['task', taskKey], queryFn: () => api.openTask({ taskKey }) });
  const teamId = task.data?.task.team_id ?? null;
  const states = useQuery({
    queryKey: ['states', teamId],
    enabled: teamId !== null,
    queryFn: () => api.workflowStates({ teamId: teamId! }),
  });
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
    onSuccess: onDone,
  });
  const onSubmit = (event: FormEvent) => {
    event.preventDefault();
    update.mutate();
  };

  return (
    <section className="panel" aria-labelledby="task-title">
      <h3 id="task-title">{taskKey}</h3>
      <ErrorLine error={task.error} />
      {task.data && (
        <form onSubmit={onSubmit}>
          <p>
            {task.data.task.title} — {task.data.task.status ?? 'no status'},{' '}
            {task.data.task.priority ?? 'no priority'}
            {task.data.synced.length > 0 ? ` (with ${task.data.synced.length} sub-tasks)` : ''}
          </p>
          <label htmlFor="task-status">Status</label>
          <select id="task-status" value={status} onChange={(event) => setStatus(event.target.value)}>
            <option value="">(unchanged)</option>
            {(states.data?.states ?? []).map((state) => (
              <option key={state.id} value={state.name}>
                {state.name}
              </option>
            ))}
          </select>
          <label htmlFor="task-priority">Priority</label>
          <select id="task-priority" value={priority} onChange={(event) => setPriority(event.target.value)}>
            <option value="">(unchanged)</option>
            {PRIORITIES.map((label) => (
              <option key={label}>{label}</option>
            ))}
          </select>
          <label className="check">
            <input
              type="checkbox"
              checked={recursive}
              onChange={(event) => setRecursive(event.target.checked)}
            />
            Also its sub-tasks
          </label>
          <button type="submit" disabled={update.isPending}>
            Save
          </button>
          {update.isSuccess && <p role="status">Updated {update.data.updated.join(', ')}.</p>}
          <ErrorLine error={update.error} />
        </form>
      )}
    </section>
  );
}
