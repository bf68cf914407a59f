import { useQueryClient } from '@tanstack/react-query';
import type { FormEvent } from 'react';
import type { Settings } from '../../../../src/window/index.ts';

/** How each Settings form keeps what the agent answers a change with, as the settings the screen shows. */
export function useKeepSettings() {
  const queries = useQueryClient();
  const keep = (value: Settings) => queries.setQueryData(['settings'], value);
  // A read still on its way when a change is sent may have been answered before the change: it is dropped, or its
  // older answer would replace the change's own when it lands. Cancelled before the change leaves, the query goes
  // back to what it showed; cancelled after the answer (tried in round 10), its revert could land last.
  const dropReadsInFlight = () => queries.cancelQueries({ queryKey: ['settings'] });
  // A secret leaves the form as soon as the agent has it.
  const keepAndClear = (clear: (text: string) => void) => (value: Settings) => {
    clear('');
    keep(value);
  };
  return { keep, dropReadsInFlight, keepAndClear };
}

/** A form's submit: the page stays, the action runs. */
export const submit = (action: () => void) => (event: FormEvent) => {
  event.preventDefault();
  action();
};
