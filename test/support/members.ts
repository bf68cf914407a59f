import { callFunction, type CallReply } from './service.ts';

/**
 * A team's members made the way an operator and a member make them (issue 48): over HTTP, an operator's credential
 * adds the member and gets an invite; the member redeems it, with the invite as the call's credential, for a token.
 */
export async function inviteMember(
  url: string,
  operatorAuth: string,
  name: string,
  role: 'read' | 'write' | 'operator',
): Promise<string> {
  const reply = await callFunction(url, operatorAuth, 'svc/members/private/add', { name, role });
  if (reply.statusCode !== 200)
    throw new Error(`member add ${name}: ${reply.statusCode} ${reply.body.errorMessage}`);
  return (reply.body.value as { invite: string }).invite;
}

export function redeemInvite(url: string, invite: string, label = 'laptop'): Promise<CallReply> {
  return callFunction(url, `Bearer ${invite}`, 'svc/members/action/redeem_invite/run', { label });
}

/** A member with a token: added, invited, redeemed. */
export async function memberToken(
  url: string,
  operatorAuth: string,
  name: string,
  role: 'read' | 'write' | 'operator',
): Promise<string> {
  const redeemed = await redeemInvite(url, await inviteMember(url, operatorAuth, name, role));
  if (redeemed.statusCode !== 200) throw new Error(`redeem for ${name}: ${redeemed.body.errorMessage}`);
  return (redeemed.body.value as { token: string }).token;
}
