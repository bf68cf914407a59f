import { tokenLabel, TOKEN_PREFIXES, type ValueOf } from '../../../protocol/index.ts';
import { CallRefused } from '../../errors.ts';
import type { CallContext, Implementations } from '../types.ts';
import { principalOf, type MemberCalls } from './changes.ts';

type OwnTokenPath = 'svc/members/public/whoami' | 'svc/members/public/renew_token';

/** What a member asks about their own token: who it says they are, and a new one before it ends. */
export function ownToken(calls: MemberCalls, selfRenew: boolean): Implementations<OwnTokenPath> {
  return {
    'svc/members/public/whoami': (_args, ctx) => whoami(ctx),
    'svc/members/public/renew_token': (_args, ctx) => renewToken(calls, selfRenew, ctx),
  };
}

function whoami(ctx: CallContext): ValueOf<'svc/members/public/whoami'> {
  const member = principalOf(ctx);
  return {
    member: member.name,
    member_id: member.memberId,
    role: member.level,
    shared: member.shared,
    token: member.tokenId === null ? null : `${TOKEN_PREFIXES.member}_${member.tokenId}`,
    label: member.label,
    expires_at: member.expiresAt,
    issued_at: member.issuedAt,
  };
}

function renewToken(
  { changing }: MemberCalls,
  selfRenew: boolean,
  ctx: CallContext,
): Promise<ValueOf<'svc/members/public/renew_token'>> {
  const member = principalOf(ctx);
  if (member.tokenId === null)
    throw new CallRefused(
      'The shared tokens do not expire, and are not renewed: only a member token (fsm_…) is.',
    );
  if (!selfRenew)
    throw new CallRefused(
      `This service does not renew tokens (its operator runs \`serve --no-self-renew\`): ${member.name}'s token ends on ${(member.expiresAt ?? '').slice(0, 10)}; ask an operator for a new invite before then.`,
      { self_renew: false },
    );
  const tokenId = member.tokenId;
  return changing(ctx, async (members, audit) => {
    const renewed = await members.renew(tokenId);
    const replaces = tokenLabel('member', tokenId);
    await audit({
      action: 'token_renewed',
      target: tokenLabel('member', renewed.tokenId),
      detail: { member: renewed.member, replaces, label: renewed.label, expires_at: renewed.expiresAt },
    });
    return {
      member: renewed.member,
      role: renewed.role,
      token: renewed.token,
      token_id: `${TOKEN_PREFIXES.member}_${renewed.tokenId}`,
      label: renewed.label,
      expires_at: renewed.expiresAt,
      replaces: `${TOKEN_PREFIXES.member}_${tokenId}`,
      replaced_expires_at: renewed.oldExpiresAt,
    };
  });
}
