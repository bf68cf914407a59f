// Electron's entry: register the TypeScript loader the CLI uses, then start the shell.
import { register } from 'tsx/esm/api';

register();
await import('./main.ts');
