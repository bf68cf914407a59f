import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import type { AgentApi, WhoYouAre as You } from '../../../../src/window/index.ts';
import { trackerUserName } from '../../../../src/protocol/index.ts';
import { ErrorLine } from '../common.tsx';

/**
 * Who the personal API key makes the user in the tracker ("Open tasks assigned to you" are that user's), and, for
 * an operator, whom else it may be registered to: the user of git's email first, when nobody is yet.
 */
export function WhoYouAre({ api }: { api: AgentApi }) {
  const queries = useQueryClient();
  // Its own question, asked of the service: the settings above never wait for it.
  const asked = useQuery({ queryKey: ['who-you-are'], queryFn: () => api.whoYouAre({}) });
  const you = asked.data;
  const [picked, setPicked] = useState<string | null>(null);
  const pick = useMutation({
    mutationFn: (userId: string) => api.setKeyOwner({ userId }),
    onSuccess: (value: You) => {
      setPicked(null);
      queries.setQueryData(['who-you-are'], value);
      // The tasks assigned to "you" are another user's now.
      void queries.invalidateQueries({ queryKey: ['tasks'] });
    },
  });
  if (!you) return <ErrorLine error={asked.error} />;
  const byEmail = you.choices.find(
    (user) => you.gitEmail !== null && user.email?.toLowerCase() === you.gitEmail.toLowerCase(),
  );
  const chosen = picked ?? you.user?.id ?? byEmail?.id ?? you.choices[0]?.id ?? '';
  return (
    <div data-testid="you">
      {you.user ? (
        <p>
          You are <strong>{trackerUserName(you.user)}</strong> in the tracker.
        </p>
      ) : (
        <p className="error">{you.problem}</p>
      )}
      {you.choices.length > 0 && (
        <div className="row">
          <label htmlFor="key-owner">{you.user ? 'Not you? Choose who you are' : 'Choose who you are'}</label>
          <select id="key-owner" value={chosen} onChange={(event) => setPicked(event.target.value)}>
            {you.choices.map((user) => (
              <option key={user.id} value={user.id}>
                {trackerUserName(user)}
              </option>
            ))}
          </select>
          <button
            type="button"
            disabled={pick.isPending || chosen === '' || chosen === you.user?.id}
            onClick={() => pick.mutate(chosen)}
          >
            This is me
          </button>
        </div>
      )}
      <ErrorLine error={pick.error ?? asked.error} />
    </div>
  );
}
