import { useMutation, useQueryClient } from '@tanstack/react-query';
import type { UseFormReturn } from 'react-hook-form';
import type { AgentApi, RepoConfigFileChange } from '../../../../src/window/index.ts';
import { ErrorLine } from '../common.tsx';
import { toConfig, type Form } from './form.ts';
import type { Save } from './save.ts';

/**
 * `.flowsync/repo-config.json` changed on disk since the form loaded it (a hand edit): Save wrote nothing. Take
 * mine saves over it (the file's kept beside it); Take the file's puts the file in the form (mine kept beside it).
 */
export function FileChanged(props: {
  api: AgentApi;
  root: string;
  form: UseFormReturn<Form>;
  fileChanged: RepoConfigFileChange;
  save: Save;
  onSettled: (kept: string | null) => void;
}) {
  const { api, root, form, fileChanged, save, onSettled } = props;
  const queries = useQueryClient();
  // Take the file's: the form shows the file; what was typed here is kept beside it.
  const takeFile = useMutation({
    mutationFn: (values: Form) => api.takeRepoConfigFile({ root, config: toConfig(values) }),
    onSuccess: (view) => {
      queries.setQueryData(['repoConfig', root], view);
      onSettled(`The file's config is in the form; yours was kept in ${view.keptAs}.`);
    },
  });
  return (
    <div role="alert" className="error" data-testid="repo-config-file-changed">
      <p>
        .flowsync/repo-config.json changed on disk since this screen loaded it: yours is not saved, and the
        file was not written over.
      </p>
      <p className="muted">
        The file's now:{' '}
        <code>
          {fileChanged.config ? JSON.stringify(fileChanged.config) : (fileChanged.text ?? '(deleted)')}
        </code>
      </p>
      <button
        type="button"
        disabled={save.isPending || takeFile.isPending}
        onClick={form.handleSubmit((values) =>
          save.mutate({ values, base: fileChanged.base, takeMine: true }),
        )}
      >
        Take mine
      </button>
      <button
        type="button"
        disabled={save.isPending || takeFile.isPending}
        onClick={form.handleSubmit((values) => takeFile.mutate(values))}
      >
        Take the file's
      </button>
      <ErrorLine error={takeFile.error} />
    </div>
  );
}
