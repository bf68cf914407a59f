#!/usr/bin/env node
// The CLI runs the TypeScript sources directly (tsx), so `npx flowsync` after `npm ci` needs no build step.
import { register } from 'tsx/esm/api';

register();
await import('../src/cli/main.ts');
