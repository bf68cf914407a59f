import { existsSync, readFileSync } from 'node:fs';
import { isIPv4, isIPv6 } from 'node:net';
import { endianness } from 'node:os';
import type { buildConnector as UndiciConnector } from 'undici';
import { buildConnector } from './undici-parts.ts';

/** The code of the error a connection to another user's listener (or one whose owner is unknown) fails with. */
export const FOREIGN_LISTENER = 'FOREIGN_LISTENER';

/** The two ends of a TCP connection as node names them (`net.Socket`). */
export interface ConnectionEnds {
  localAddress?: string;
  localPort?: number;
  remoteAddress?: string;
  remotePort?: number;
}

/**
 * Opens connections as undici does, then, before a request (and its Authorization header) is written on one, makes
 * sure the listener that took it is this user's (or root's); else the connection is closed unused. Decided by the
 * connected socket, never by the URL's spelling: `0.0.0.0`, `[::ffff:127.0.0.1]`, `127.1` and a name that
 * resolves to this machine all reach a loopback listener. Asked once per connection, not per call: reading
 * /proc/net/tcp and tcp6 took 20-50 ms here (122 sockets, 2 cores at a load of 20-30), and the pool keeps its few
 * connections open for many calls. With `socketPath`, connections go through that Unix socket instead.
 */
export function ownListenerConnector(baseUrl: string, socketPath?: string): UndiciConnector.connector {
  const connect = buildConnector(socketPath ? { socketPath } : {});
  return (options, callback) =>
    connect(options, (error, socket) => {
      if (error) return callback(error, null);
      // A socket in the user's own 0700 folder: only the user's processes can listen there.
      if (socketPath) return callback(null, socket);
      const owner = listenerOwner(socket);
      if (owner.kind === 'own') return callback(null, socket);
      socket.destroy();
      const refusal = new Error(
        owner.kind === 'stranger'
          ? `The service at ${baseUrl} is run by another user (uid ${owner.uid}), so flowsync sends it no ` +
              'token: stop that program, or give your own service with --url.'
          : `Could not tell which user runs the service at ${baseUrl} (a port of this machine), so flowsync sends ` +
              'it no token: try again, or give your own service with --url.',
      );
      callback(Object.assign(refusal, { code: FOREIGN_LISTENER }), null);
    });
}

/** Who listens at the other end of a connection this process opened. */
export type ListenerOwner = { kind: 'own' } | { kind: 'stranger'; uid: number } | { kind: 'unknown' };

/**
 * The owner of the listener that took this connection, as the kernel tells it: on a machine shared with other users,
 * a port of this machine is whoever bound it first, and a token sent there is theirs. On Linux, /proc/net/tcp and
 * tcp6 name the uid of each listening socket. The connection is to this machine when its address is a loopback
 * one or when the other end is in the same table; the listener is the one the kernel would give it: same family
 * (a v4 connection also reaches a v6 socket bound to `::` or to the v4-mapped address), the exact address before
 * a wildcard. So another user's listener on `[::1]:7420` is not the one that took a connection to
 * `127.0.0.1:7420`. Root is not a stranger: it can read the user's keychain anyway, and a service published
 * from a container (`docker run -p 7420:7420`) listens through root's docker-proxy. 'own' for a service on
 * another machine, and where the OS does not say (macOS, Windows: there the promise rests on never sending the
 * embedded tokens to a fixed port).
 */
export function listenerOwner(
  ends: ConnectionEnds,
  tables = readSocketTables(ends.remotePort),
): ListenerOwner {
  if (!socketOwnersKnown()) return { kind: 'own' };
  const remote = parseAddress(ends.remoteAddress);
  const local = parseAddress(ends.localAddress);
  if (!remote || !local || !ends.remotePort || !ends.localPort) return { kind: 'unknown' };
  const serverEnd = tables.find(
    (entry) =>
      entry.state !== LISTEN &&
      entry.localPort === ends.remotePort &&
      entry.remotePort === ends.localPort &&
      entry.local === remote &&
      entry.remote === local,
  );
  if (!serverEnd && !isLoopback(remote)) return { kind: 'own' };
  const me = process.getuid!();
  const stranger = (entry: SocketEntry) => entry.inode !== 0 && entry.uid !== me && entry.uid !== 0;
  // Accepted already: the socket's owner is the process that took it.
  if (serverEnd && stranger(serverEnd)) return { kind: 'stranger', uid: serverEnd.uid };
  const listeners = tables.filter((entry) => entry.state === LISTEN && entry.localPort === ends.remotePort);
  const v4 = !remote.includes(':');
  // The kernel's order of preference (inet_lhash2_lookup: the exact address, then the wildcard; a v4 socket
  // before a v6 one within each). A `::` socket that is v6only takes no v4 connection, but it cannot share the
  // port with one of another user that does, so the group's owners are the listener's.
  const groups = v4
    ? [
        listeners.filter((entry) => entry.v4 && entry.local === remote),
        listeners.filter((entry) => !entry.v4 && entry.local === remote),
        listeners.filter((entry) => entry.v4 && entry.local === '0.0.0.0'),
        listeners.filter((entry) => !entry.v4 && entry.local === '::'),
      ]
    : [
        listeners.filter((entry) => !entry.v4 && entry.local === remote),
        listeners.filter((entry) => !entry.v4 && entry.local === '::'),
      ];
  const taker = groups.find((group) => group.length > 0);
  if (!taker) return { kind: 'unknown' };
  const foreign = taker.find(stranger);
  return foreign ? { kind: 'stranger', uid: foreign.uid } : { kind: 'own' };
}

/**
 * The uid of the process at the other end of a loopback TCP connection accepted by this one (Linux's /proc/net/tcp
 * and tcp6: the socket whose local end is our peer and whose remote end is us, in any TCP state: a client that
 * sent its request and half-closed is in FIN_WAIT2, not ESTABLISHED). Null when the owner cannot be established: the
 * connection is gone from the table, or the peer's socket is closed (an orphan or TIME_WAIT socket has inode 0 and
 * shows uid 0, which would pass for root), and where the OS does not say (macOS, Windows). TCP has no
 * SO_PEERCRED; the kernel's table is the one place that names a loopback peer's user. About 20-50 ms on a loaded
 * machine: once per connection.
 */
export function loopbackPeerUid(
  ends: ConnectionEnds,
  tables: SocketEntry[] | PeerIndex = readSocketTables(ends.localPort),
): number | null {
  const remote = parseAddress(ends.remoteAddress);
  const local = parseAddress(ends.localAddress);
  if (!remote || !local || !ends.remotePort || !ends.localPort) return null;
  const peer = (tables instanceof PeerIndex ? tables : new PeerIndex(tables)).find(
    remote,
    ends.remotePort,
    local,
    ends.localPort,
  );
  return peer && peer.inode !== 0 ? peer.uid : null;
}

/** The sockets of a table by both ends, for many look-ups in one read (a server sorting out its connections). */
export class PeerIndex {
  private readonly byEnds = new Map<string, SocketEntry>();
  constructor(tables: SocketEntry[]) {
    for (const entry of tables) {
      if (entry.state === LISTEN) continue;
      this.byEnds.set(`${entry.local} ${entry.localPort} ${entry.remote} ${entry.remotePort}`, entry);
    }
  }
  find(local: string, localPort: number, remote: string, remotePort: number): SocketEntry | undefined {
    return this.byEnds.get(`${local} ${localPort} ${remote} ${remotePort}`);
  }
}

/**
 * Whether a connection accepted by this process may be from another user: true for another user's (not this
 * process's, not root's), and, failing closed, for one whose owner the kernel's table does not establish. On a
 * machine shared with people the window's bridge answers none of theirs, whatever credential they carry. False
 * where the OS does not say (macOS, Windows).
 */
export function fromAnotherUser(ends: ConnectionEnds): boolean {
  if (!socketOwnersKnown()) return false;
  const uid = loopbackPeerUid(ends);
  return uid === null || (uid !== process.getuid!() && uid !== 0);
}

const LISTEN = '0A';

/**
 * Whether the kernel names sockets' owners here: Linux, with its TCP table readable. A sandbox without
 * /proc/net/tcp is like macOS and Windows (no user could remove it to make a peer pass for unknown).
 */
export function socketOwnersKnown(): boolean {
  return process.platform === 'linux' && existsSync('/proc/net/tcp');
}

/** One line of /proc/net/tcp or tcp6, its addresses as canonical text (a v4-mapped address as plain v4). */
export interface SocketEntry {
  v4: boolean;
  local: string;
  localPort: number;
  remote: string;
  remotePort: number;
  state: string;
  uid: number;
  inode: number;
}

/**
 * Both of the kernel's TCP tables; a missing one (no IPv6 on this machine) is empty. With `port`, only the sockets
 * with that port at either end: a busy machine has tens of thousands (23,000 lines took 250 ms to read and parse
 * whole), and a line is skipped on a substring before it is split.
 */
export function readSocketTables(port?: number): SocketEntry[] {
  if (process.platform !== 'linux') return [];
  const mark = port === undefined ? null : `:${port.toString(16).toUpperCase().padStart(4, '0')} `;
  const entries: SocketEntry[] = [];
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text: string;
    try {
      text = readFileSync(table, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      if (mark !== null && !line.includes(mark)) continue;
      // sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode …
      const fields = line.trim().split(/\s+/);
      if (fields.length < 10) continue;
      const [local, localPort] = fields[1]!.split(':');
      const [remote, remotePort] = fields[2]!.split(':');
      entries.push({
        v4: table.endsWith('tcp'),
        local: kernelAddress(local!),
        localPort: parseInt(localPort!, 16),
        remote: kernelAddress(remote!),
        remotePort: parseInt(remotePort!, 16),
        state: fields[3]!,
        uid: Number(fields[7]),
        inode: Number(fields[9]),
      });
    }
  }
  return entries;
}

/** The kernel prints each 32-bit word of an address in the machine's byte order. */
function kernelAddress(hex: string): string {
  const bytes = Buffer.alloc(hex.length / 2);
  for (let word = 0; word < hex.length / 8; word++) {
    const value = parseInt(hex.slice(word * 8, word * 8 + 8), 16);
    if (endianness() === 'LE') bytes.writeUInt32LE(value, word * 4);
    else bytes.writeUInt32BE(value, word * 4);
  }
  return canonical(bytes);
}

/** An address as node prints it (`127.0.0.1`, `::1`, `::ffff:127.0.0.1`), canonical; null when it is none. */
export function parseAddress(text: string | undefined): string | null {
  if (!text) return null;
  if (isIPv4(text)) return text;
  if (!isIPv6(text)) return null;
  // A trailing dotted quad (`::ffff:127.0.0.1`) is the last two words.
  const head = text
    .replace(/%.*$/, '')
    .replace(/(\d+)\.(\d+)\.(\d+)\.(\d+)$/, (_all, a: string, b: string, c: string, d: string) =>
      [(Number(a) << 8) | Number(b), (Number(c) << 8) | Number(d)].map((word) => word.toString(16)).join(':'),
    );
  const [left, right] = head.includes('::') ? head.split('::') : [head, undefined];
  const words = (part: string | undefined) => (part ? part.split(':').map((word) => parseInt(word, 16)) : []);
  const before = words(left);
  const after = words(right);
  const fill = right === undefined ? [] : new Array<number>(8 - before.length - after.length).fill(0);
  const all = [...before, ...fill, ...after];
  const bytes = Buffer.alloc(16);
  all.forEach((word, index) => bytes.writeUInt16BE(word, index * 2));
  return canonical(bytes);
}

/** A 4- or 16-byte address as text: v4 dotted (also for a v4-mapped v6 address), v6 as 8 hex words. */
function canonical(bytes: Buffer): string {
  if (bytes.length === 16 && bytes.subarray(0, 10).every((byte) => byte === 0)) {
    if (bytes[10] === 0xff && bytes[11] === 0xff) return [...bytes.subarray(12)].join('.');
  }
  if (bytes.length === 4) return [...bytes].join('.');
  if (bytes.every((byte) => byte === 0)) return '::';
  const words: string[] = [];
  for (let index = 0; index < 16; index += 2) words.push(bytes.readUInt16BE(index).toString(16));
  return words.join(':');
}

function isLoopback(address: string): boolean {
  return address.startsWith('127.') || address === '0:0:0:0:0:0:0:1';
}
