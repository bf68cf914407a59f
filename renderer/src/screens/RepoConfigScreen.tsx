import { useState } from 'react';
import { useStatus, type ScreenProps } from './common.tsx';
import { ConfigForm } from './repo-config/ConfigForm.tsx';

export function RepoConfigScreen({ api }: ScreenProps) {
  const status = useStatus(api);
  const repositories = status.data?.repositories ?? [];
  const [root, setRoot] = useState<string | null>(null);
  // A settled conflict puts the chosen config in the file: the form starts again from it (a reset of the form kept
  // what had been typed, as its `values` keep dirty fields).
  const [settled, setSettled] = useState(0);
  // Where a settled conflict kept what it replaced, said in a sentence (the form starts again, so it is said here).
  const [kept, setKept] = useState<string | null>(null);
  const chosen = root ?? repositories[0]?.root ?? null;
  if (repositories.length === 0) return <p>Add a repository on the Sync screen first.</p>;
  return (
    <section aria-labelledby="config-title">
      <h2 id="config-title">Repository config</h2>
      <label htmlFor="config-repository">Repository</label>
      <select id="config-repository" value={chosen ?? ''} onChange={(event) => setRoot(event.target.value)}>
        {repositories.map((repo) => (
          <option key={repo.root} value={repo.root}>
            {repo.owner}/{repo.name}
          </option>
        ))}
      </select>
      {chosen && (
        <ConfigForm
          key={`${chosen}#${settled}`}
          api={api}
          root={chosen}
          onSettled={(line) => {
            setKept(line);
            setSettled((count) => count + 1);
          }}
        />
      )}
      {kept && (
        <p role="status" data-testid="repo-config-kept">
          {kept}
        </p>
      )}
    </section>
  );
}
