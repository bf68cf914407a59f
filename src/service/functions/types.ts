import type { FunctionPath, ParsedArgsOf, ValueOf } from '../../protocol/index.ts';
import type { Caller } from '../store/access-tokens.ts';
import type { Principal } from '../store/credentials.ts';
import type { RegisteredApiKey } from '../store/api-keys.ts';

/** What an implementation knows about the call besides its args. */
export interface CallContext {
  traceId: string;
  caller: Caller;
  /** The member whose credential made the call (null only for redeem_invite, whose credential is an invite). */
  member: Principal | null;
  /** The invite presented as the credential of redeem_invite; null for every other call. */
  invite: string | null;
  /** The registered personal API key, for tracker actions (the dispatcher has already refused unknown ones). */
  apiKey: RegisteredApiKey | null;
  /** The writing client's name as it says (`x-flowsync-writer`, e.g. `dev@laptop:~/code/app`), for the history. */
  writer: string | null;
}

/**
 * A function's behaviour. What it writes is one transaction of the database (`db.transaction`), so a call is one
 * atomic step on SQLite and on Postgres alike. Throw `CallRefused` for a well-formed call the function will not do
 * (HTTP 422).
 */
export type Implementation<P extends FunctionPath> = (
  args: ParsedArgsOf<P>,
  ctx: CallContext,
) => ValueOf<P> | Promise<ValueOf<P>>;

export type Implementations<P extends FunctionPath> = { [K in P]: Implementation<K> };
