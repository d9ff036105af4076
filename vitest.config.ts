import { availableParallelism } from "node:os";
import { configDefaults, defineConfig } from "vitest/config";

// Most system suites wait on real processes and sockets rather than compute, so a fork per core
// leaves the CPUs half idle (vitest's default is one fewer than the cores): run one more fork than
// there are cores. HOOKLINE_TEST_FORKS sets the number (1 runs the files one after another).
const forks = Number(process.env.HOOKLINE_TEST_FORKS) || availableParallelism() + 1;

export default defineConfig({
  test: {
    // Suites that run bin/*.mjs as processes run dist/: build it first when it is stale. The
    // Redis suites leave their keys behind: remove them at the end of the run.
    globalSetup: ["test/support/build.ts", "test/support/redis-cleanup.ts"],
    testTimeout: 30_000,
    // Services the suites start make their venvs with workflow_sdk only: pip installing the
    // pre-installed set from this machine's mirror costs each throwaway data home about 45 s.
    // emulator/preinstall.test.ts runs the pre-install itself.
    env: { SVC_PREINSTALL: process.env.SVC_PREINSTALL ?? "off" },
    hookTimeout: 120_000,
    poolOptions: {
      forks: { maxForks: forks, minForks: 1 },
      // The unit project's files share one worker thread, one after another, without a process
      // and a fresh import per file: they clean up after themselves.
      threads: { isolate: false, maxThreads: 1, minThreads: 1 },
    },
    projects: [
      {
        extends: true,
        test: {
          name: "unit",
          // One piece at a time, in process; and the Python unittest suites, one child each.
          include: ["src/**/*.test.ts", "test/python-suites.test.ts"],
          pool: "threads",
        },
      },
      {
        extends: true,
        test: {
          name: "system",
          // Each file starts real services: its own process, so nothing leaks between files.
          include: ["emulator/**/*.test.ts", "test/**/*.test.ts"],
          exclude: [...configDefaults.exclude, "test/python-suites.test.ts"],
          pool: "forks",
        },
      },
    ],
  },
});
