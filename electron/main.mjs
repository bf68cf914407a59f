// Electron's entry: register the TypeScript loader the CLI uses (tsx, its disk cache off), then start the shell.
import '../scripts/register-tsx.mjs';

await import('./main.ts');
