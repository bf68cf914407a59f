import { unsafePathReason, type FileEntry } from '../../protocol/index.ts';
import { CallRefused } from '../errors.ts';
import { sha256Hex } from '../hash.ts';
import { FlowStore } from '../store/flows.ts';
import type { ServiceStores } from './stores.ts';
import type { Implementations } from './types.ts';

type FlowDefPath =
  | 'svc/flow_def/action/sync_batch/run'
  | 'svc/flow_def/private/sync_internal'
  | 'svc/flow_def/public/update_file';

export function flowDefFunctions({ db }: ServiceStores): Implementations<FlowDefPath> {
  const flows = new FlowStore(db);

  return {
    'svc/flow_def/action/sync_batch/run': (args) => {
      const seen = new Set<string>();
      args.flows.forEach((flow, index) => {
        refuseUnsafePath(flow.flow_path, ['flows', index, 'flow_path']);
        if (seen.has(flow.flow_path)) {
          throw new CallRefused(`flows.${index}.flow_path "${flow.flow_path}" appears twice in the batch.`, {
            path: ['flows', index, 'flow_path'],
          });
        }
        seen.add(flow.flow_path);
        checkFiles(flow.files, ['flows', index, 'files']);
      });

      return db.transaction(() => {
        const repoId = flows.ensureRepo(args.repo_owner, args.repo_name);
        const value = {
          files_created: 0,
          files_deleted: 0,
          files_updated: 0,
          flows_synced: 0,
          skipped: false,
          repo_id: repoId,
          files: [] as { flow_path: string; path: string; id: string; hash: string }[],
        };
        for (const flow of args.flows) {
          const result = flows.syncFlow(repoId, flow.flow_path, flow.files, {
            deleteMissing: args.delete_missing ?? false,
            keepFlowHash: false,
          });
          value.files_created += result.created;
          value.files_updated += result.updated;
          value.files_deleted += result.deleted;
          value.flows_synced++;
          value.files.push(...result.written);
        }
        value.skipped = value.files_created + value.files_updated + value.files_deleted === 0;
        return value;
      })();
    },

    'svc/flow_def/private/sync_internal': (args) => {
      refuseUnsafePath(args.flow_path, ['flow_path']);
      checkFiles(args.files, ['files']);
      return db.transaction(() => {
        if (!flows.repoExists(args.repo_id)) {
          throw new CallRefused(
            `No repository with id ${args.repo_id}: sync it once with sync_batch first.`,
            {
              path: ['repo_id'],
            },
          );
        }
        const result = flows.syncFlow(args.repo_id, args.flow_path, args.files, {
          deleteMissing: args.delete_missing ?? false,
          keepFlowHash: args.skip_hash_update ?? false,
        });
        return {
          files_created: result.created,
          files_deleted: result.deleted,
          files_updated: result.updated,
          flow_def_id: result.flowId,
          files: result.written,
        };
      })();
    },

    'svc/flow_def/public/update_file': (args) => {
      const record = db.transaction(() => flows.updateFileContent(args.fileId, args.content))();
      if (!record) throw new CallRefused(`No file with id ${args.fileId}.`, { path: ['fileId'] });
      return record;
    },
  };
}

function refuseUnsafePath(path: string, where: (string | number)[]): void {
  const reason = unsafePathReason(path);
  if (reason) {
    throw new CallRefused(`${where.join('.')} "${path.slice(0, 200)}" ${reason}: nothing was written.`, {
      path: where,
    });
  }
}

/** Every path safe and unique within its flow, every hash the SHA-256 of its content; checked before any write. */
function checkFiles(files: readonly FileEntry[], where: (string | number)[]): void {
  const seen = new Set<string>();
  files.forEach((file, index) => {
    refuseUnsafePath(file.path, [...where, index, 'path']);
    if (seen.has(file.path)) {
      throw new CallRefused(
        `${[...where, index, 'path'].join('.')} "${file.path}" appears twice in the flow.`,
        {
          path: [...where, index, 'path'],
        },
      );
    }
    seen.add(file.path);
    if (sha256Hex(file.content) !== file.hash) {
      throw new CallRefused(
        `${[...where, index, 'hash'].join('.')} is not the SHA-256 of the content of "${file.path}": nothing was written.`,
        { path: [...where, index, 'hash'] },
      );
    }
  });
}
