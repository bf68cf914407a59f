import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

// The window is served by the loopback bridge (and loaded by Electron from disk): relative asset paths, no server.
export default defineConfig({
  root: import.meta.dirname,
  base: './',
  plugins: [react()],
  build: { outDir: 'dist', emptyOutDir: true, sourcemap: false },
});
