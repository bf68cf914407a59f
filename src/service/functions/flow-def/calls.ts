import { CallRefused } from '../../errors.ts';
import { AuditLog } from '../../store/audit-log.ts';
import type { Writer } from '../../store/file-history.ts';
import { FlowStore } from '../../store/flows.ts';
import type { ServiceStores } from '../stores.ts';
import type { CallContext } from '../types.ts';

/** What every flow-definition function is built from: one transaction for its writes, a repository by name. */
export interface FlowCalls {
  /** One call's writes, whole or not at all; its reads see one state. */
  writing<T>(work: (flows: FlowStore, audit: AuditLog) => Promise<T>): Promise<T>;
  reading<T>(work: (flows: FlowStore) => Promise<T>): Promise<T>;
  /** Who wrote, as the history keeps it. */
  writerOf(ctx: CallContext): Writer;
  /** A repository by owner and name; refused when nothing was ever synced under them. */
  repoNamed(flows: FlowStore, owner: string, name: string): Promise<string>;
}

export function flowCalls({ db }: ServiceStores): FlowCalls {
  return {
    writing: (work) => db.transaction((sql) => work(new FlowStore(sql), new AuditLog(sql))),
    reading: (work) => db.read((sql) => work(new FlowStore(sql))),
    // Who wrote it is the credential's member; the client's label is kept beside it, as the device it names.
    writerOf: (ctx) => ({
      name: ctx.writer,
      kind: ctx.caller,
      memberId: ctx.member?.memberId ?? null,
      tokenId: ctx.member?.tokenId ?? null,
    }),
    repoNamed: async (flows, owner, name) => {
      const repoId = await flows.repoByName(owner, name);
      if (repoId === null)
        throw new CallRefused(`No repository ${owner}/${name} on this service.`, { path: ['repo_name'] });
      return repoId;
    },
  };
}
