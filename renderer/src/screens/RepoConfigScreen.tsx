import { zodResolver } from '@hookform/resolvers/zod';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { useFieldArray, useForm } from 'react-hook-form';
import { z } from 'zod';
import type { AgentApi, RepoConfigFileChange } from '../../../src/window/index.ts';
import {
  PERMISSION_MODES,
  backgroundJobSchema,
  repoConfigSchema,
  type RepoConfig,
} from '../../../src/protocol/index.ts';
import { ApiError } from '../api.ts';
import { ErrorLine, useStatus, type ScreenProps } from './common.tsx';

const jsonText = z.string().refine(
  (text) => {
    if (text.trim() === '') return true;
    try {
      JSON.parse(text);
      return true;
    } catch {
      return false;
    }
  },
  { message: 'Not valid JSON' },
);

/** The form's own shape: text where a person types text; turned into a RepoConfig (and checked again) on save. */
const formSchema = z.object({
  artifactDir: z.string(),
  jobs: z.array(backgroundJobSchema).refine((jobs) => new Set(jobs.map((j) => j.name)).size === jobs.length, {
    message: 'Background job names must be unique',
  }),
  model: z.string(),
  permissionMode: z.string(),
  copyIgnored: z.string(),
  editor: z.string(),
  user: z.string(),
  backendJson: jsonText,
  serviceJson: jsonText,
});
type Form = z.infer<typeof formSchema>;

function toForm(config: RepoConfig): Form {
  return {
    artifactDir: config.artifact_config?.dir ?? '',
    jobs: config.background_jobs ?? [],
    model: config.assistant_config?.model ?? '',
    permissionMode: config.assistant_config?.permission_mode ?? '',
    copyIgnored: (config.copy_ignored_files ?? []).join('\n'),
    editor: config.editor ?? '',
    user: config.user ?? '',
    backendJson: config.backend_config === undefined ? '' : JSON.stringify(config.backend_config, null, 2),
    serviceJson: config.service_config === undefined ? '' : JSON.stringify(config.service_config, null, 2),
  };
}

function toConfig(form: Form): RepoConfig {
  const lines = form.copyIgnored
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean);
  return repoConfigSchema.parse({
    ...(form.artifactDir && { artifact_config: { dir: form.artifactDir } }),
    ...(form.jobs.length > 0 && { background_jobs: form.jobs }),
    ...((form.model || form.permissionMode) && {
      assistant_config: { model: form.model, permission_mode: form.permissionMode },
    }),
    ...(lines.length > 0 && { copy_ignored_files: lines }),
    ...(form.editor && { editor: form.editor }),
    ...(form.user && { user: form.user }),
    ...(form.backendJson.trim() && { backend_config: JSON.parse(form.backendJson) }),
    ...(form.serviceJson.trim() && { service_config: JSON.parse(form.serviceJson) }),
  });
}

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

function ConfigForm({
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
  // the config arrives nothing can be edited: a reset on arrival would wipe what was typed (issue 9, item 9).
  const form = useForm<Form>({
    resolver: zodResolver(formSchema),
    defaultValues: toForm({}),
    values: current.data ? toForm(current.data.config) : undefined,
    resetOptions: { keepDirtyValues: true },
  });
  const jobs = useFieldArray({ control: form.control, name: 'jobs' });
  const loaded = current.data !== undefined;
  const queries = useQueryClient();
  // The file changed on disk since this form loaded it (a hand edit): its Save wrote nothing; its user chooses.
  const [fileChanged, setFileChanged] = useState<RepoConfigFileChange | null>(null);
  const save = useMutation({
    // Made on the file as this form loaded it (its base): a file changed since is never written over.
    mutationFn: ({ values, base, takeMine }: { values: Form; base: string | null; takeMine?: true }) =>
      api.saveRepoConfig({ root, config: toConfig(values), base, takeMine }),
    // The file exists now: "New file" must not stay; a conflict is shown from the view.
    onSuccess: async (saved, { takeMine }) => {
      setFileChanged(saved.fileChanged);
      // Not read again on a conflict with the file: the form keeps the config and base it loaded (a reread would
      // pour the hand edit into the fields not typed in, and make the next Save write over the rest of it).
      if (saved.fileChanged) return;
      await queries.invalidateQueries({ queryKey: ['repoConfig', root] });
      // Settled by taking mine: the form starts again from the file (and its new base), once it is read.
      if (takeMine && !saved.fileChanged)
        onSettled(saved.keptAs && `Yours is in the file; the file's was kept in ${saved.keptAs}.`);
    },
    onError: (error) => {
      // The agent's own check (the same schema) names fields too: show them where they are.
      if (error instanceof ApiError) {
        for (const issue of error.body.issues ?? []) {
          const field =
            issue.path[1] === 'background_jobs' ? `jobs.${issue.path[2]}.${issue.path[3]}` : 'root';
          form.setError(field as 'root', { message: issue.message });
        }
      }
    },
  });
  // "Saved …" is about what was saved: the next edit makes it stale. Same for a refusal.
  const { reset: forgetSave } = save;
  useEffect(() => {
    const watching = form.watch((_values, { type }) => {
      if (type === 'change') forgetSave();
    });
    return () => watching.unsubscribe();
  }, [form, forgetSave]);
  // A teammate's newer config on the service: theirs written here, or mine sent on top; the form then shows the file.
  const settle = useMutation({
    mutationFn: (keep: 'mine' | 'theirs') => api.settleRepoConfig({ root, keep }),
    onSuccess: (view) => {
      queries.setQueryData(['repoConfig', root], view);
      onSettled(view.keptAs && `The service's config is in the file; yours was kept in ${view.keptAs}.`);
    },
  });
  // Take the file's: the form shows the file; what was typed here is kept beside it.
  const takeFile = useMutation({
    mutationFn: (values: Form) => api.takeRepoConfigFile({ root, config: toConfig(values) }),
    onSuccess: (view) => {
      queries.setQueryData(['repoConfig', root], view);
      onSettled(`The file's config is in the form; yours was kept in ${view.keptAs}.`);
    },
  });
  const conflict = current.data?.conflict ?? null;
  const permissionMode = form.watch('permissionMode');
  const { errors } = form.formState;
  const fieldError = (message: string | undefined, id: string) =>
    message ? (
      <span id={id} role="alert" className="error">
        {message}
      </span>
    ) : null;

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
      {conflict && (
        <div role="alert" className="error" data-testid="repo-config-conflict">
          <p>
            The repository's config changed on the service by {conflict.writtenBy ?? 'someone'} at{' '}
            {conflict.writtenAt}: yours is saved in this checkout, not sent, and the service's was not
            overwritten.
          </p>
          <p className="muted">
            The service's: <code>{JSON.stringify(conflict.config)}</code>
          </p>
          <button type="button" disabled={settle.isPending} onClick={() => settle.mutate('theirs')}>
            Take the service's
          </button>
          <button type="button" disabled={settle.isPending} onClick={() => settle.mutate('mine')}>
            Keep mine
          </button>
          <ErrorLine error={settle.error} />
        </div>
      )}
      {fileChanged && (
        <div role="alert" className="error" data-testid="repo-config-file-changed">
          <p>
            .flowsync/repo-config.json changed on disk since this screen loaded it: yours is not saved, and
            the file was not written over.
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
      )}
      <fieldset className="plain" disabled={!loaded}>
        <fieldset>
          <legend>Artifacts and editor</legend>
          <label htmlFor="artifact-dir">Artifact folder (artifact_config.dir)</label>
          <input id="artifact-dir" {...form.register('artifactDir')} />
          <label htmlFor="editor">Editor</label>
          <input id="editor" {...form.register('editor')} />
          <label htmlFor="user">User</label>
          <input id="user" {...form.register('user')} />
          <label htmlFor="copy-ignored">Ignored files to copy (one per line)</label>
          <textarea id="copy-ignored" rows={3} {...form.register('copyIgnored')} />
        </fieldset>
        <fieldset>
          <legend>Assistant</legend>
          <label htmlFor="assistant-model">Model</label>
          <input id="assistant-model" {...form.register('model')} />
          <label htmlFor="permission-mode">Permission mode</label>
          <select id="permission-mode" {...form.register('permissionMode')}>
            <option value="">(none)</option>
            {PERMISSION_MODES.map((mode) => (
              <option key={mode}>{mode}</option>
            ))}
            {permissionMode && !(PERMISSION_MODES as readonly string[]).includes(permissionMode) && (
              <option>{permissionMode}</option>
            )}
          </select>
        </fieldset>
        <fieldset>
          <legend>Background jobs</legend>
          {jobs.fields.map((job, index) => (
            <div key={job.id} className="job" role="group" aria-label={`Background job ${index + 1}`}>
              <label htmlFor={`job-${index}-name`}>Name</label>
              <input id={`job-${index}-name`} {...form.register(`jobs.${index}.name`)} />
              {fieldError(errors.jobs?.[index]?.name?.message, `job-${index}-name-error`)}
              <label htmlFor={`job-${index}-command`}>Command</label>
              <input id={`job-${index}-command`} {...form.register(`jobs.${index}.command`)} />
              {fieldError(errors.jobs?.[index]?.command?.message, `job-${index}-command-error`)}
              <label htmlFor={`job-${index}-description`}>Description</label>
              <input id={`job-${index}-description`} {...form.register(`jobs.${index}.description`)} />
              <button type="button" onClick={() => jobs.remove(index)}>
                Remove job {index + 1}
              </button>
            </div>
          ))}
          {fieldError(errors.jobs?.root?.message ?? errors.jobs?.message, 'jobs-error')}
          <button type="button" onClick={() => jobs.append({ name: '', command: '', description: '' })}>
            Add a background job
          </button>
        </fieldset>
        <fieldset>
          <legend>Backend and service (JSON)</legend>
          <label htmlFor="backend-config">backend_config</label>
          <textarea id="backend-config" rows={4} {...form.register('backendJson')} />
          {fieldError(errors.backendJson?.message, 'backend-error')}
          <label htmlFor="service-config">service_config</label>
          <textarea id="service-config" rows={4} {...form.register('serviceJson')} />
          {fieldError(errors.serviceJson?.message, 'service-error')}
        </fieldset>
        {fieldError(errors.root?.message, 'form-error')}
        <button type="submit" disabled={save.isPending}>
          {save.isPending ? 'Saving…' : 'Save'}
        </button>
      </fieldset>
      {save.isSuccess && save.data.record && <p role="status">Saved to {save.data.path} and the service.</p>}
      {save.isSuccess && save.data.conflict && (
        <p role="status">Saved to {save.data.path}; not sent: the service has a newer config (above).</p>
      )}
      {save.error && !(save.error instanceof ApiError && save.error.body.issues) && (
        <ErrorLine error={save.error} />
      )}
    </form>
  );
}
