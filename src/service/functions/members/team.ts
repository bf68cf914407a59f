import { tokenLabel, TOKEN_PREFIXES } from '../../../protocol/index.ts';
import { CallRefused } from '../../errors.ts';
import { defaultTokenDays, MemberStore } from '../../store/members.ts';
import type { Implementations } from '../types.ts';
import { actorOf, inviteAnswer, type MemberCalls } from './changes.ts';

type TeamPath =
  | 'svc/members/private/add'
  | 'svc/members/private/invite'
  | 'svc/members/private/list'
  | 'svc/members/private/remove'
  | 'svc/members/private/role'
  | 'svc/members/private/revoke_token';

/** What an operator does to the team: add a member, invite one again, list, remove, change a role, revoke a token. */
export function teamChanges({ db, changing }: MemberCalls): Implementations<TeamPath> {
  return {
    'svc/members/private/add': (args, ctx) =>
      changing(ctx, async (members, audit) => {
        const member = await members.add(args.name, args.role, actorOf(ctx));
        const made = await members.invite(
          member,
          args.token_days ?? defaultTokenDays(member.role),
          actorOf(ctx),
        );
        await audit({
          action: 'member_added',
          target: member.name,
          detail: { role: member.role, invite: tokenLabel('invite', made.id), expires_at: made.expiresAt },
        });
        return inviteAnswer(member, made);
      }),

    'svc/members/private/invite': (args, ctx) =>
      changing(ctx, async (members, audit) => {
        const member = await members.active(args.name);
        const made = await members.invite(member, defaultTokenDays(member.role), actorOf(ctx));
        await audit({
          action: 'invite_created',
          target: member.name,
          detail: { invite: tokenLabel('invite', made.id), expires_at: made.expiresAt },
        });
        return inviteAnswer(member, made);
      }),

    'svc/members/private/list': () =>
      db.read(async (sql) => ({ members: await new MemberStore(sql).list() })),

    'svc/members/private/remove': (args, ctx) =>
      changing(ctx, async (members, audit) => {
        const removed = await members.remove(args.name, actorOf(ctx));
        await audit({
          action: 'member_removed',
          target: removed.member,
          detail: { tokens_revoked: removed.tokensRevoked },
        });
        return { member: removed.member, tokens_revoked: removed.tokensRevoked };
      }),

    'svc/members/private/role': (args, ctx) =>
      changing(ctx, async (members, audit) => {
        const changed = await members.setRole(args.name, args.role);
        await audit({
          action: 'role_changed',
          target: changed.member,
          detail: { from: changed.was, to: changed.role },
        });
        return changed;
      }),

    'svc/members/private/revoke_token': (args, ctx) =>
      changing(ctx, async (members, audit) => {
        const revoked = await members.revokeToken(tokenIdOf(args.token_id), actorOf(ctx));
        const token = `${TOKEN_PREFIXES.member}_${revoked.tokenId}`;
        await audit({ action: 'token_revoked', target: token, detail: { member: revoked.member } });
        return { token_id: token, member: revoked.member };
      }),
  };
}

/** A token's id as a person may give it: `fsm_3kT9xQ2mB7…`, `fsm_3kT9xQ2mB7`, or the id alone. */
export function tokenIdOf(given: string): string {
  const id = given
    .trim()
    .replace(/^fsm_/, '')
    .replace(/(…|\.\.\.)$/, '');
  if (!/^[0-9A-Za-z]{10}$/.test(id))
    throw new CallRefused(`"${given.slice(0, 80)}" is not a token id: \`member list\` shows them (fsm_…).`, {
      path: ['token_id'],
    });
  return id;
}
