import { useQuery } from '@tanstack/react-query';
import type { AgentApi } from '../../../src/window/index.ts';

export interface ScreenProps {
  api: AgentApi;
}

/** The agent's status, kept fresh by the pushed events (see App). */
export function useStatus(api: AgentApi) {
  return useQuery({ queryKey: ['status'], queryFn: () => api.status({}) });
}

/** An error where it happened, announced to screen readers. */
export function ErrorLine({ error }: { error: unknown }) {
  if (!error) return null;
  return (
    <p role="alert" className="error">
      {error instanceof Error ? error.message : String(error)}
    </p>
  );
}

/** A secret typed once: hidden, never autocompleted. */
export function SecretInput(props: {
  id: string;
  label: string;
  value: string;
  onChange: (text: string) => void;
}) {
  return (
    <>
      <label htmlFor={props.id}>{props.label}</label>
      <input
        id={props.id}
        type="password"
        autoComplete="off"
        value={props.value}
        onChange={(event) => props.onChange(event.target.value)}
      />
    </>
  );
}
