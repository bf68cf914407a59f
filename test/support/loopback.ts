import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { Agent, request as undiciRequest } from 'undici';

type Callback = (
  error: NodeJS.ErrnoException | null,
  address: string | LookupAddress[],
  family?: number,
) => void;

/**
 * A name under `localhost` resolved as browsers resolve it, to the loopback (the OS's resolver may not: glibc
 * without systemd-resolved does not); any other name as usual. The window's address is `<random>.localhost`.
 */
function lookup(hostname: string, options: LookupOptions, callback: Callback): void {
  if (hostname !== 'localhost' && !hostname.endsWith('.localhost'))
    return dnsLookup(hostname, { ...options, all: true }, (error, addresses) =>
      options.all || error
        ? callback(error, addresses)
        : callback(null, addresses[0]!.address, addresses[0]!.family),
    );
  if (options.all) return callback(null, [{ address: '127.0.0.1', family: 4 }]);
  return callback(null, '127.0.0.1', 4);
}

/** undici's dispatcher, with `*.localhost` resolved as a browser does. */
export const localhostDispatcher = new Agent({ connect: { lookup } as object });

/** undici's `request`, with `*.localhost` resolved as a browser does: what the tests call the window's address with. */
export const request: typeof undiciRequest = ((url: string, options: object = {}) =>
  undiciRequest(url, { dispatcher: localhostDispatcher, ...options })) as typeof undiciRequest;
