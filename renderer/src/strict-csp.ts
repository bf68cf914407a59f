// Imported first by main.tsx, before any zod schema is built. The page's CSP forbids eval, and zod probes for it
// with `new Function` when it builds an object schema unless told not to: the probe's error is caught, but the
// browser still reports each probe as a CSP violation (test/e2e/strict-csp.test.ts counts them: none).
import { config } from 'zod';

config({ jitless: true });
