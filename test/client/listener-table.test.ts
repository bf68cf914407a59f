import { describe, expect, it } from 'vitest';
import { listenerOwner, loopbackPeerUid, type SocketEntry } from '../../src/client/listener-owner.ts';

/**
 * Which listener takes a connection, and who is at the other end of one, read from the kernel's socket table: the
 * rules on tables written out here (the tests with a real second user are listener-owner.test.ts and
 * test/window/another-user.test.ts).
 */
const me = process.getuid!();
const stranger = me + 4242;
const PORT = 7420;

const listener = (local: string, uid: number, v4 = !local.includes(':')): SocketEntry => ({
  v4,
  local,
  localPort: PORT,
  remote: v4 ? '0.0.0.0' : '::',
  remotePort: 0,
  state: '0A',
  uid,
  inode: 1000 + uid,
});

/** Our client's connection from 127.0.0.1:50000 (or ::1) to the port. */
const v4Connection = {
  localAddress: '127.0.0.1',
  localPort: 50000,
  remoteAddress: '127.0.0.1',
  remotePort: PORT,
};
const v6Connection = { localAddress: '::1', localPort: 50000, remoteAddress: '::1', remotePort: PORT };
const V6_LOOPBACK = '0:0:0:0:0:0:0:1';

describe('the listener that takes a connection', () => {
  it.each([
    [
      'the exact v4 address before another user on [::1]',
      [listener('127.0.0.1', me), listener(V6_LOOPBACK, stranger)],
      'own',
    ],
    ['a v6 wildcard that takes v4 too', [listener('::', stranger)], 'stranger'],
    [
      'the exact v4 address before a v4 wildcard',
      [listener('0.0.0.0', stranger), listener('127.0.0.1', me)],
      'own',
    ],
    ['a v4 wildcard before a v6 one', [listener('0.0.0.0', me), listener('::', stranger)], 'own'],
    [
      'a v6 socket bound to the v4-mapped address before a wildcard',
      [listener('127.0.0.1', stranger, false), listener('0.0.0.0', me)],
      'stranger',
    ],
    ['root, as a container published by docker-proxy', [listener('0.0.0.0', 0)], 'own'],
    ['nobody listening that the table shows', [listener('127.0.0.2', me)], 'unknown'],
  ])('a v4 connection: %s', (_what, tables, kind) => {
    expect(listenerOwner(v4Connection, tables).kind).toBe(kind);
  });

  it.each([
    [
      'another user on [::1], though the user listens on 127.0.0.1',
      [listener('127.0.0.1', me), listener(V6_LOOPBACK, stranger)],
      'stranger',
    ],
    [
      'the exact v6 address before a v6 wildcard',
      [listener('::', stranger), listener(V6_LOOPBACK, me)],
      'own',
    ],
    ['a v4 wildcard takes no v6 connection', [listener('0.0.0.0', stranger), listener('::', me)], 'own'],
  ])('a v6 connection: %s', (_what, tables, kind) => {
    expect(listenerOwner(v6Connection, tables).kind).toBe(kind);
  });

  it('a service on another machine is not asked about', () => {
    const remote = {
      localAddress: '10.0.0.5',
      localPort: 50000,
      remoteAddress: '93.184.216.34',
      remotePort: 443,
    };
    expect(listenerOwner(remote, [listener('0.0.0.0', stranger)]).kind).toBe('own');
  });
});

describe('the user at the other end of an accepted connection', () => {
  // The bridge's end: 127.0.0.1:PORT; the peer's: 127.0.0.1:50000.
  const accepted = {
    localAddress: '127.0.0.1',
    localPort: PORT,
    remoteAddress: '127.0.0.1',
    remotePort: 50000,
  };
  const peer = (state: string, uid: number, inode: number, local = '127.0.0.1'): SocketEntry => ({
    v4: true,
    local,
    localPort: 50000,
    remote: '127.0.0.1',
    remotePort: PORT,
    state,
    uid,
    inode,
  });

  it.each([
    ['established', peer('01', stranger, 9), stranger],
    ['half-closed (FIN_WAIT2)', peer('05', stranger, 9), stranger],
    ['closed, an orphan that shows uid 0 and no inode', peer('05', 0, 0), null],
    ['in TIME_WAIT', peer('06', 0, 0), null],
    ['root, established', peer('01', 0, 9), 0],
  ])('%s', (_what, entry, uid) => {
    expect(loopbackPeerUid(accepted, [entry])).toBe(uid);
  });

  it('is nobody when the table has no such socket, or one with the same ports on another address', () => {
    expect(loopbackPeerUid(accepted, [])).toBe(null);
    expect(loopbackPeerUid(accepted, [peer('01', me, 9, '127.0.0.2')])).toBe(null);
  });
});
