import { createRequire } from 'node:module';
import type { Pool as UndiciPool, buildConnector as undiciBuildConnector } from 'undici';

const require = createRequire(import.meta.url);

/**
 * undici's pool and connector, the two parts of it the client uses, without its index: the index loads everything
 * undici has (fetch, WebSocket, the mocks, the caches with node:sqlite, HTTP/2's proxy agents), which was 0.12-0.18
 * s of CPU of every command that calls a service, `flowsync status` among them, against 0.06 for these.
 * undici 7 has no exports map: these are its own files, as its index requires them. The index gives each dispatcher
 * its request API (`pool.request`) by assigning it to Dispatcher's prototype; so does this, before the pool is used.
 * In one initializer with the export, so that the build, which takes our modules to define things only, keeps it.
 */
export const Pool: typeof UndiciPool = (() => {
  const dispatcher = require('undici/lib/dispatcher/dispatcher') as { prototype: object };
  Object.assign(dispatcher.prototype, require('undici/lib/api') as object);
  return require('undici/lib/dispatcher/pool') as typeof UndiciPool;
})();

export const buildConnector = require('undici/lib/core/connect') as typeof undiciBuildConnector;
