import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import type { AgentApi, MemberView } from '../../../src/window/index.ts';
import { ErrorLine, SecretInput } from './common.tsx';

/** What each role may do, in the words of the design (team-members.md §3.12). */
const CAN: Record<MemberView['role'], string> = {
  read: 'can read: your edits are not sent',
  write: 'can read and write',
  operator: 'can read, write and manage members',
};

function expires(iso: string | null): string {
  if (iso === null) return 'never expires';
  const day = new Date(iso).toLocaleDateString('en-GB', { day: 'numeric', month: 'short', year: 'numeric' });
  return `expires ${day}`;
}

/**
 * Settings → Service, for a team's service: "You are alice (can read and write) · token "laptop" · expires …", and
 * a field to join with the one-time invite an operator sent, as `flowsync login --invite` does.
 */
export function ServiceMember({ api }: { api: AgentApi }) {
  const queries = useQueryClient();
  // Asked of the service: the settings above never wait for it.
  const asked = useQuery({ queryKey: ['who-am-i'], queryFn: () => api.whoAmI({}) });
  const [invite, setInvite] = useState('');
  const join = useMutation({
    mutationFn: () => api.joinWithInvite({ invite }),
    onSuccess: (you) => {
      setInvite(''); // the invite leaves the form as soon as it is spent
      queries.setQueryData(['who-am-i'], you);
      void queries.invalidateQueries({ queryKey: ['settings'] });
    },
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    join.mutate();
  };
  const you = asked.data;
  return (
    <form onSubmit={submit} data-testid="service-member" aria-labelledby="member-title">
      <h3 id="member-title">You on the team&apos;s service</h3>
      <fieldset className="plain">
        {you && (
          <p data-testid="member">
            {you.shared ? (
              <>
                Signed in with the team’s <strong>shared</strong> token: your writes show as “shared”. Ask an
                operator for an invite of your own.
              </>
            ) : (
              <>
                You are <strong>{you.member}</strong> ({CAN[you.role]}) · token{' '}
                {you.label ? `“${you.label}”` : you.token} · {expires(you.expiresAt)}
              </>
            )}
          </p>
        )}
        {(!you || you.shared) && (
          <>
            <SecretInput id="invite" label="Join with an invite" value={invite} onChange={setInvite} />
            <button type="submit" disabled={invite.trim().length < 8 || join.isPending}>
              Join
            </button>
          </>
        )}
        <ErrorLine error={join.error ?? asked.error} />
      </fieldset>
    </form>
  );
}
