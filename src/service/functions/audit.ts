import { AuditLog, type AuditActor } from '../store/audit-log.ts';
import type { ServiceStores } from './stores.ts';
import type { CallContext, Implementations } from './types.ts';

/** One call deleting this many files or more is a mass change, kept in the audit log. */
export const BULK_DELETE_AUDIT = 50;

/** The call's actor for the audit: its credential's member, or someone with the database itself (`--db`). */
export function auditActorOf(ctx: CallContext): AuditActor {
  const member = ctx.member;
  if (!member) return { system: true };
  if (member.memberId.startsWith('local:')) return { local: member.memberId.slice('local:'.length) };
  return { memberId: member.memberId, tokenId: member.tokenId };
}

export function auditFunctions({ db }: ServiceStores): Implementations<'svc/members/private/audit'> {
  return {
    'svc/members/private/audit': (args) =>
      db.read(async (sql) => {
        const log = new AuditLog(sql);
        const events = await log.list({
          since: args.since ?? null,
          action: args.action ?? null,
          limit: args.limit ?? 100,
        });
        return { events, ...(args.verify && { verified: await log.verify() }) };
      }),
  };
}
