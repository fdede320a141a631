/**
 * Builds the web console (console/) into dist/console, which `tapedeck serve` serves at `/`
 * (src/console/routes.ts). Assets go under /console/assets with hashed names; nothing is
 * inlined, so the page's Content-Security-Policy can allow this origin's files only.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const here = path.dirname(fileURLToPath(import.meta.url));

export default defineConfig({
  root: here,
  base: '/console/',
  publicDir: false,
  logLevel: 'warn',
  build: {
    outDir: path.join(here, '..', 'dist', 'console'),
    emptyOutDir: true,
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    target: 'es2022',
    sourcemap: false,
  },
});
