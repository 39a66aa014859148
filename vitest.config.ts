// vitest configuration: every suite under test/, run in forks so native-addon crashes are isolated.
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    pool: 'forks',
    globalSetup: ['test/temp-root.ts'],
    testTimeout: 60_000,
    hookTimeout: 600_000,
  },
});
