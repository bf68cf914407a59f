import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DebugLogger } from 'builder-util';
import { describe, expect, it } from 'vitest';
// electron-builder's own loader and schema check, as `npm run dist` runs them (the packaging itself needs Electron's
// binary, which is not downloaded here).
import { getConfig, validateConfiguration } from 'app-builder-lib/out/util/config/config.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

describe('electron-builder.yml', () => {
  it("passes electron-builder's schema and sets the fuses the utility-process agent and the app:// page allow", async () => {
    const config = await getConfig(ROOT, null, null);
    await validateConfiguration(config, new DebugLogger(false));
    expect(config.electronFuses).toEqual({
      runAsNode: false,
      enableCookieEncryption: true,
      enableNodeOptionsEnvironmentVariable: false,
      enableNodeCliInspectArguments: false,
      enableEmbeddedAsarIntegrityValidation: true,
      onlyLoadAppFromAsar: true,
      // The page is served from app://, so file:// pages keep no extra privileges (fetch, service workers).
      grantFileProtocolExtraPrivileges: false,
    });
  });
});

/**
 * The Node major each Electron embeds, from its release notes (Electron 45.0.0: "Node v24.21.0"). The packaged app
 * runs the agent on it, so `.ci/run` must run the suite on the same major.
 */
const ELECTRON_NODE_MAJOR: Record<number, number> = { 45: 24 };

describe('the Node CI runs on', () => {
  it('is the major the installed Electron embeds, the one the desktop app runs the agent on', () => {
    const electron = JSON.parse(readFileSync(join(ROOT, 'node_modules/electron/package.json'), 'utf8')) as {
      version: string;
    };
    const electronMajor = Number(electron.version.split('.')[0]);
    const ci = /^NODE_MAJOR=(\d+)$/m.exec(readFileSync(join(ROOT, '.ci/run'), 'utf8'));
    // A new Electron: add the Node its release notes name, and set .ci/run's NODE_MAJOR to that major.
    expect({ electron: electronMajor, node: ELECTRON_NODE_MAJOR[electronMajor] }).toEqual({
      electron: electronMajor,
      node: Number(ci?.[1]),
    });
  });
});
