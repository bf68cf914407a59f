import { useFieldArray, type UseFormReturn } from 'react-hook-form';
import { PERMISSION_MODES } from '../../../../src/protocol/index.ts';
import type { Form } from './form.ts';

type FormProps = { form: UseFormReturn<Form> };

/** A field's error beside it, announced (nothing when the field is valid). */
export function FieldError({ message, id }: { message: string | undefined; id: string }) {
  return message ? (
    <span id={id} role="alert" className="error">
      {message}
    </span>
  ) : null;
}

export function ArtifactsAndEditor({ form }: FormProps) {
  return (
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
  );
}

/** The assistant's model and permission mode; a mode the file has that this version does not know stays listed. */
export function Assistant({ form }: FormProps) {
  const permissionMode = form.watch('permissionMode');
  return (
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
  );
}

export function BackgroundJobs({ form }: FormProps) {
  const jobs = useFieldArray({ control: form.control, name: 'jobs' });
  const { errors } = form.formState;
  return (
    <fieldset>
      <legend>Background jobs</legend>
      {jobs.fields.map((job, index) => (
        <div key={job.id} className="job" role="group" aria-label={`Background job ${index + 1}`}>
          <label htmlFor={`job-${index}-name`}>Name</label>
          <input id={`job-${index}-name`} {...form.register(`jobs.${index}.name`)} />
          <FieldError message={errors.jobs?.[index]?.name?.message} id={`job-${index}-name-error`} />
          <label htmlFor={`job-${index}-command`}>Command</label>
          <input id={`job-${index}-command`} {...form.register(`jobs.${index}.command`)} />
          <FieldError message={errors.jobs?.[index]?.command?.message} id={`job-${index}-command-error`} />
          <label htmlFor={`job-${index}-description`}>Description</label>
          <input id={`job-${index}-description`} {...form.register(`jobs.${index}.description`)} />
          <button type="button" onClick={() => jobs.remove(index)}>
            Remove job {index + 1}
          </button>
        </div>
      ))}
      <FieldError message={errors.jobs?.root?.message ?? errors.jobs?.message} id="jobs-error" />
      <button type="button" onClick={() => jobs.append({ name: '', command: '', description: '' })}>
        Add a background job
      </button>
    </fieldset>
  );
}

export function BackendAndService({ form }: FormProps) {
  const { errors } = form.formState;
  return (
    <fieldset>
      <legend>Backend and service (JSON)</legend>
      <label htmlFor="backend-config">backend_config</label>
      <textarea id="backend-config" rows={4} {...form.register('backendJson')} />
      <FieldError message={errors.backendJson?.message} id="backend-error" />
      <label htmlFor="service-config">service_config</label>
      <textarea id="service-config" rows={4} {...form.register('serviceJson')} />
      <FieldError message={errors.serviceJson?.message} id="service-error" />
    </fieldset>
  );
}
