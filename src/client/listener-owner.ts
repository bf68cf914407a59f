import { readFileSync } from 'node:fs';
import { endianness } from 'node:os';
import { buildConnector } from 'undici';

/** The code of the error a connection to another user's listener fails with. */
export const FOREIGN_LISTENER = 'FOREIGN_LISTENER';

/**
 * Opens connections as undici does, then, before a request (and its Authorization header) is written on one, makes
 * sure no other user listens on the service's loopback port; else the connection is closed unused. Asked once per
 * connection, not per call: reading /proc/net/tcp and tcp6 took 20-50 ms here (122 sockets, 2 cores at a load of
 * 20-30), and the pool keeps its few connections open for many calls.
 */
export function ownListenerConnector(base: URL, baseUrl: string): buildConnector.connector {
  const connect = buildConnector({});
  return (options, callback) =>
    connect(options, (error, socket) => {
      if (error) return callback(error, null);
      const strangers = foreignListeners(base);
      if (strangers.length === 0) return callback(null, socket);
      socket.destroy();
      const refusal = new Error(
        `The service at ${baseUrl} is run by another user (uid ${strangers.join(', ')}), so flowsync sends it no ` +
          'token: stop that program, or give your own service with --url.',
      );
      callback(Object.assign(refusal, { code: FOREIGN_LISTENER }), null);
    });
}

/**
 * Who listens at a loopback address, as the kernel tells it: on a machine shared with other users, 127.0.0.1:7420
 * is whoever bound it first, and a token sent there is theirs. On Linux, /proc/net/tcp and tcp6 name the uid of
 * each listening socket; the users other than this process's (and root) that listen on the URL's port at a loopback or
 * wildcard address (either would take the connection) are returned, so that no secret is sent to them. Empty
 * when the URL is not a loopback one, when nothing listens (the call then fails to connect), and where the OS
 * does not say (macOS, Windows: there the promise rests on never sending the embedded tokens to a fixed port).
 */
export function foreignListeners(url: URL): number[] {
  if (process.platform !== 'linux' || !isLoopbackHost(url.hostname)) return [];
  const port = Number(url.port || (url.protocol === 'https:' ? 443 : 80));
  const me = process.getuid!();
  const owners = new Set<number>();
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text: string;
    try {
      text = readFileSync(table, 'utf8');
    } catch {
      continue; // no IPv6 on this machine
    }
    for (const line of text.split('\n').slice(1)) {
      // sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid …
      const fields = line.trim().split(/\s+/);
      if (fields.length < 8 || fields[3] !== LISTEN) continue;
      const [address, hexPort] = fields[1]!.split(':');
      if (parseInt(hexPort!, 16) !== port || !takesLoopback(address!)) continue;
      // Root is not a stranger: it can read the user's keychain anyway, and a service published from a container
      // (`docker run -p 7420:7420`) listens through root's docker-proxy.
      const uid = Number(fields[7]);
      if (uid !== me && uid !== 0) owners.add(uid);
    }
  }
  return [...owners];
}

const LISTEN = '0A';
const ESTABLISHED = '01';

/**
 * The uid of the process at the other end of a loopback TCP connection accepted by this one (Linux's
 * /proc/net/tcp and tcp6: the socket whose local port is our peer's and whose remote port is ours); null when the
 * OS does not say (macOS, Windows) or the connection is gone. TCP has no SO_PEERCRED; the kernel's table is the
 * one place that names a loopback peer's user. About 20-50 ms on a loaded machine: once per connection.
 */
export function loopbackPeerUid(socket: { remotePort?: number; localPort?: number }): number | null {
  if (process.platform !== 'linux' || !socket.remotePort || !socket.localPort) return null;
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text: string;
    try {
      text = readFileSync(table, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      if (fields.length < 8 || fields[3] !== ESTABLISHED) continue;
      const [local, localPort] = fields[1]!.split(':');
      const [, remotePort] = fields[2]!.split(':');
      if (parseInt(localPort!, 16) !== socket.remotePort || parseInt(remotePort!, 16) !== socket.localPort)
        continue;
      if (!takesLoopback(local!)) continue;
      return Number(fields[7]);
    }
  }
  return null;
}

/**
 * Whether a connection comes from another user (not this process's, not root): on a machine shared with people,
 * the window's bridge answers none of theirs, whatever credential they carry (one read from a page they served on
 * the window's port while the agent was stopped, say). False where the OS does not say.
 */
export function fromAnotherUser(socket: { remotePort?: number; localPort?: number }): boolean {
  const uid = loopbackPeerUid(socket);
  return uid !== null && uid !== process.getuid!() && uid !== 0;
}

function isLoopbackHost(hostname: string): boolean {
  return hostname === 'localhost' || hostname === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(hostname);
}

/**
 * Whether a socket bound to this address takes connections to a loopback address: 127/8, ::1, ::ffff:127/104, or a
 * wildcard. The kernel prints each 32-bit word of the address in the machine's byte order.
 */
function takesLoopback(hex: string): boolean {
  const bytes = Buffer.alloc(hex.length / 2);
  for (let word = 0; word < hex.length / 8; word++) {
    const value = parseInt(hex.slice(word * 8, word * 8 + 8), 16);
    if (endianness() === 'LE') bytes.writeUInt32LE(value, word * 4);
    else bytes.writeUInt32BE(value, word * 4);
  }
  if (bytes.every((byte) => byte === 0)) return true;
  if (bytes.length === 4) return bytes[0] === 127;
  const zeros = (from: number, to: number) => bytes.subarray(from, to).every((byte) => byte === 0);
  if (zeros(0, 15) && bytes[15] === 1) return true;
  return zeros(0, 10) && bytes[10] === 0xff && bytes[11] === 0xff && (bytes[12] === 127 || zeros(12, 16));
}
