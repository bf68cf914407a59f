import { zodResolver } from '@hookform/resolvers/zod';
import { useQuery } from '@tanstack/react-query';
import { useForm } from 'react-hook-form';
import type { AgentApi } from '../../../../src/window/index.ts';
import { ErrorLine } from '../common.tsx';
import {
  ArtifactsAndEditor,
  Assistant,
  BackendAndService,
  BackgroundJobs,
  FieldError,
} from './ConfigFields.tsx';
import { FileChanged } from './FileChanged.tsx';
import { Saved } from './Saved.tsx';
import { ServiceConflict } from './ServiceConflict.tsx';
import { formSchema, toForm, type Form } from './form.ts';
import { useSave } from './save.ts';

/**
 * One repository's `.flowsync/repo-config.json` as a form: its fields, Save, and the two conflicts a save can meet
 * (a teammate's newer config on the service, a hand edit of the file since this form loaded it).
 */
export function ConfigForm({
  api,
  root,
  onSettled,
}: {
  api: AgentApi;
  root: string;
  /** A conflict settled: the sentence that says where what was replaced is kept (null: nothing was). */
  onSettled: (kept: string | null) => void;
}) {
  const current = useQuery({ queryKey: ['repoConfig', root], queryFn: () => api.getRepoConfig({ root }) });
  // The form follows the loaded config, and a later refetch never overwrites a field the user has changed. Until
  // the config arrives nothing can be edited: a reset on arrival would wipe what was typed.
  const form = useForm<Form>({
    resolver: zodResolver(formSchema),
    defaultValues: toForm({}),
    values: current.data ? toForm(current.data.config) : undefined,
    resetOptions: { keepDirtyValues: true },
  });
  const loaded = current.data !== undefined;
  const { save, fileChanged } = useSave(api, root, form, onSettled);
  const conflict = current.data?.conflict ?? null;

  return (
    <form
      onSubmit={form.handleSubmit((values) => save.mutate({ values, base: current.data?.base ?? null }))}
      noValidate
      aria-busy={!loaded}
      data-testid="repo-config-form"
    >
      <ErrorLine error={current.error} />
      {current.data ? (
        <p className="muted">{current.data.exists ? current.data.path : `New file: ${current.data.path}`}</p>
      ) : (
        !current.error && <p className="muted">Loading the repository's config…</p>
      )}
      {conflict && <ServiceConflict api={api} root={root} conflict={conflict} onSettled={onSettled} />}
      {fileChanged && (
        <FileChanged
          api={api}
          root={root}
          form={form}
          fileChanged={fileChanged}
          save={save}
          onSettled={onSettled}
        />
      )}
      <fieldset className="plain" disabled={!loaded}>
        <ArtifactsAndEditor form={form} />
        <Assistant form={form} />
        <BackgroundJobs form={form} />
        <BackendAndService form={form} />
        <FieldError message={form.formState.errors.root?.message} id="form-error" />
        <button type="submit" disabled={save.isPending}>
          {save.isPending ? 'Saving…' : 'Save'}
        </button>
      </fieldset>
      <Saved save={save} />
    </form>
  );
}
