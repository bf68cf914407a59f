import type { FastifyReply, FastifyRequest } from 'fastify';
import { replyValue } from '../contract.ts';
import { ANOTHER_USERS, refuse } from './answers.ts';
import type { Callers } from './callers.ts';
import type { WindowSessions } from './window-sessions.ts';

/**
 * `POST /api/session`: a page gets its session here (see window-sessions.ts), with one of: the launch token of its
 * address (once), its tab's credential of this run (a reload), or the session it holds (back after the agent's
 * restart: a new tab credential). Each answer has a new tab credential, or the one presented.
 */
export function startSession(sessions: WindowSessions, callers: Callers) {
  return async (request: FastifyRequest, reply: FastifyReply) => {
    const body = (request.body ?? {}) as { launch?: unknown; tab?: unknown; session?: unknown };
    const text = (value: unknown) => (typeof value === 'string' ? value : '');
    const [launch, tab, held] = [text(body.launch), text(body.tab), text(body.session)];
    const valid =
      (launch !== '' && sessions.isLaunch(launch)) ||
      (tab !== '' && sessions.isTab(tab)) ||
      (held !== '' && sessions.identify(held) === 'session');
    if (!valid) {
      return refuse(
        reply,
        401,
        launch !== ''
          ? 'This window address was already used (or is from an earlier run): `flowsync ui --open` opens a new one.'
          : "This window's session has ended: `flowsync ui --open` opens a new window.",
      );
    }
    // A launch token is in the browser's argv while it starts (`flowsync ui --open`), where every user reads it in
    // /proc: traded only with this user's processes, a copy read there is worth nothing to another user. It stays
    // alive then, so the user's own page still opens. Asked only for a valid credential: a table read per
    // connection is what let idle connections stall the bridge (see checkCredential).
    if (callers.fromStranger(request.raw.socket)) return refuse(reply, 403, ANOTHER_USERS);
    callers.credentialShown(request.raw.socket);
    if (launch !== '') return replyValue({ session: sessions.exchange(launch)!, tab: sessions.newTab() });
    if (tab !== '') return replyValue({ session: sessions.reopen(tab)!, tab });
    return replyValue({ session: held, tab: sessions.newTab() });
  };
}

/** `POST /api/hello`: a page that lost its agent asks this before it sends its session again (window-sessions.ts, prove). */
export function hello(sessions: WindowSessions, callers: Callers, port: () => number) {
  return async (request: FastifyRequest, reply: FastifyReply) => {
    const { id, challenge } = (request.body ?? {}) as { id?: unknown; challenge?: unknown };
    const valid = (text: unknown): text is string => typeof text === 'string' && /^[\w-]{16,128}$/.test(text);
    const proof = valid(id) && valid(challenge) ? sessions.prove(id, challenge, port()) : null;
    if (proof !== null && callers.fromStranger(request.raw.socket)) return refuse(reply, 403, ANOTHER_USERS);
    return replyValue({ agent: 'flowsync', proof });
  };
}
