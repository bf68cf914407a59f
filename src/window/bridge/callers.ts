import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import { fromAnotherUser } from '../../client/index.ts';
import type { ConnectionLimits } from '../../service/index.ts';

/** Who is on the other end of the bridge's connections, and how long a connection may wait until it says. */
export class Callers {
  // Whether a connection is another local user's (or of a user the kernel does not name), asked once per
  // connection (a WeakMap by socket). One through the private socket is the user's: nobody else can open it.
  private readonly strangers = new WeakMap<Socket, boolean>();

  constructor(private readonly limits: ConnectionLimits) {}

  fromStranger(socket: Socket): boolean {
    let stranger = this.strangers.get(socket);
    if (stranger === undefined) this.strangers.set(socket, (stranger = fromAnotherUser(socket)));
    return stranger;
  }

  /** The private socket's connections: only this user's processes can open it. */
  ownConnections(server: Server): void {
    server.on('connection', (socket: Socket) => this.strangers.set(socket, false));
  }

  // A connection has a short time (keep-alive's, 5 s) until it shows a valid credential, then the usual 30 s: one
  // that only waits holds a slot that briefly (a window's event stream, a heartbeat every 15 s, needs the 30 s).
  timeConnections(server: Server): void {
    server.on('connection', (socket: Socket) => socket.setTimeout(this.limits.keepAliveMs));
  }

  credentialShown(socket: Socket): void {
    socket.setTimeout(this.limits.idleMs);
  }
}
