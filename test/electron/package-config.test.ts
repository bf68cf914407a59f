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
