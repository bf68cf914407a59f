import type { Role } from '../../../protocol/index.ts';
import type { ServiceDatabase, Sql } from '../../db/open.ts';
import { AuditLog, type AuditEntry } from '../../store/audit-log.ts';
import type { Principal } from '../../store/credentials.ts';
import { MemberStore, type Actor } from '../../store/members.ts';
import { auditActorOf } from '../audit.ts';
import type { ServiceStores } from '../stores.ts';
import type { CallContext } from '../types.ts';

/** What every member function is built from: the database, and the change of the members as one step. */
export interface MemberCalls {
  db: ServiceDatabase;
  /** Reads the list of members again now (ServiceStores.membersChanged). */
  membersChanged: () => Promise<void>;
  /** A change of the members and its audit event, then this process's list read again before the caller hears. */
  changing<T>(
    ctx: CallContext,
    work: (members: MemberStore, audit: (entry: Omit<AuditEntry, 'traceId'>) => Promise<void>) => Promise<T>,
  ): Promise<T>;
}

export function memberCalls({ db, membersChanged }: ServiceStores): MemberCalls {
  return {
    db,
    membersChanged,
    changing: async (ctx, work) => {
      const value = await db.transaction((sql) =>
        work(new MemberStore(sql), (entry) => audited(sql, ctx, entry)),
      );
      await membersChanged();
      return value;
    },
  };
}

/** An event of this call in the audit log, in the transaction of its change. */
function audited(sql: Sql, ctx: CallContext, entry: Omit<AuditEntry, 'traceId'>): Promise<void> {
  return new AuditLog(sql).append(auditActorOf(ctx), { ...entry, traceId: ctx.traceId });
}

export function principalOf(ctx: CallContext): Principal {
  if (!ctx.member) throw new Error('a member function was admitted without a member');
  return ctx.member;
}

export function actorOf(ctx: CallContext): Actor {
  return { memberId: principalOf(ctx).memberId };
}

export function inviteAnswer(
  member: { name: string; role: Role },
  made: { invite: string; expiresAt: string },
) {
  return {
    member: member.name,
    role: member.role,
    invite: made.invite,
    expires_at: made.expiresAt,
  };
}
