import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import type { UseFormReturn } from 'react-hook-form';
import type { AgentApi, RepoConfigFileChange } from '../../../../src/window/index.ts';
import { ApiError } from '../../api.ts';
import { toConfig, type Form } from './form.ts';

/**
 * Save, made on the file as the form loaded it (its base): a file changed since is never written over, and comes
 * back as `fileChanged` for its user to choose.
 */
export function useSave(
  api: AgentApi,
  root: string,
  form: UseFormReturn<Form>,
  onSettled: (kept: string | null) => void,
) {
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
  return { save, fileChanged };
}

export type Save = ReturnType<typeof useSave>['save'];
