import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["src/**/*.test.ts", "emulator/**/*.test.ts", "test/**/*.test.ts"],
    // Suites that run bin/*.mjs as processes run dist/: build it first when it is stale.
    globalSetup: ["test/support/build.ts"],
    testTimeout: 30_000,
    hookTimeout: 120_000,
    pool: "forks",
  },
});
