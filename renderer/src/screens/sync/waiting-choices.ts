import { useMutation } from '@tanstack/react-query';
import { useState } from 'react';
import type { AgentApi } from '../../../../src/window/index.ts';

/** A file the service has, as its user saw it listed: what a deletion is confirmed on. */
export type SeenFile = { flowPath: string; path: string; hash: string };
export type NotInCheckoutFile = SeenFile & { writtenBy: string | null; writtenAt: string };
/** One file in conflict, named as the agent settles it. */
export type ConflictFile = { flowPath: string; path: string };

/**
 * The choices a user makes on what waits in one repository, held by Waiting for you rather than by each part: one
 * choice at a time in the whole section (busy disables every part's buttons), and their errors and results said
 * once, at its top.
 */
export function useWaitingChoices(api: AgentApi, root: string, onChange: () => void) {
  const resolve = useMutation({
    mutationFn: (input: { side: 'mine' | 'theirs'; files?: ConflictFile[] }) =>
      api.resolveConflicts({ root, ...input }),
    onSettled: onChange,
  });
  const deletions = useMutation({
    mutationFn: (choice: 'delete' | 'restore') => api.settleDeletions({ root, choice }),
    onSettled: onChange,
  });
  const notHere = useMutation({
    mutationFn: (input: { choice: 'delete' | 'restore'; files?: SeenFile[] }) =>
      api.settleNotInCheckout({ root, ...input, ...(input.choice === 'delete' && { confirmed: true }) }),
    onSettled: () => {
      setDeleting(null);
      onChange();
    },
  });
  /** The files "Delete them on the service" would delete, listed for its user to confirm (null: not asked). */
  const [deleting, setDeleting] = useState<NotInCheckoutFile[] | null>(null);
  const listNotHere = useMutation({
    mutationFn: () => api.notInCheckout({ root }),
    onSuccess: ({ files }) => setDeleting(files),
  });
  const busy = resolve.isPending || deletions.isPending || notHere.isPending || listNotHere.isPending;
  return { resolve, deletions, notHere, listNotHere, deleting, setDeleting, busy };
}

export type WaitingChoices = ReturnType<typeof useWaitingChoices>;
