import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  resolve: {
    // The examples import the package by name, as a user's project does; here it is the source.
    alias: { 'tapedeck/testing': fileURLToPath(new URL('./src/testing/index.ts', import.meta.url)) },
  },
  test: {
    include: ['test/**/*.test.ts', 'examples/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // PGlite instances are memory-hungry; two workers fit the 2-core machines.
    maxWorkers: 2,
  },
});
