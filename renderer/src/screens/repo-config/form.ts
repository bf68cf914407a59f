import { z } from 'zod';
import { backgroundJobSchema, repoConfigSchema, type RepoConfig } from '../../../../src/protocol/index.ts';

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
export const formSchema = z.object({
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
export type Form = z.infer<typeof formSchema>;

export function toForm(config: RepoConfig): Form {
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

export function toConfig(form: Form): RepoConfig {
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
