// The member functions. Nobody, operators included, ever sees another member's token: an operator makes
// an invite, the member redeems it for a token that only their answer carries. Each change is one transaction that
// bumps the members' epoch and writes its audit event, and is answered only once this process uses the new list.
// Only this file is imported from outside the folder.
import type { ServiceStores } from '../stores.ts';
import type { Implementations } from '../types.ts';
import { memberCalls } from './changes.ts';
import { ownToken } from './own-token.ts';
import { redeemInvite } from './redeem-invite.ts';
import { teamChanges } from './team.ts';

export { tokenIdOf } from './team.ts';

export type MembersPath =
  | 'svc/members/public/whoami'
  | 'svc/members/action/redeem_invite/run'
  | 'svc/members/private/add'
  | 'svc/members/private/invite'
  | 'svc/members/private/list'
  | 'svc/members/private/remove'
  | 'svc/members/private/role'
  | 'svc/members/private/revoke_token'
  | 'svc/members/public/renew_token';

/** Every member function: a member's own token, an invite redeemed, and what operators change in the team. */
export function memberFunctions(stores: ServiceStores): Implementations<MembersPath> {
  const calls = memberCalls(stores);
  return {
    ...ownToken(calls, stores.selfRenew ?? true),
    ...redeemInvite(calls),
    ...teamChanges(calls),
  };
}
