import { ApiError } from '../../api.ts';
import { ErrorLine } from '../common.tsx';
import type { Save } from './save.ts';

/** What the last Save did: saved and sent, saved and not sent, or why not (a field's own error is at the field). */
export function Saved({ save }: { save: Save }) {
  return (
    <>
      {save.isSuccess && save.data.record && <p role="status">Saved to {save.data.path} and the service.</p>}
      {save.isSuccess && save.data.conflict && (
        <p role="status">Saved to {save.data.path}; not sent: the service has a newer config (above).</p>
      )}
      {save.error && !(save.error instanceof ApiError && save.error.body.issues) && (
        <ErrorLine error={save.error} />
      )}
    </>
  );
}
