// The Python halves of the suite, run by `npm test` in the unit project's lane beside the
// TypeScript files: the runtime's unittest suite (`npm run test:py`) and every example's
// test_handlers.py (`npm run test:examples`). Each runs as it does on its own; its whole output
// is the failure message.
import { execa } from "execa";
import { describe, expect, it } from "vitest";

const root = new URL("..", import.meta.url).pathname;

async function npmRun(script: string) {
  const run = await execa("npm", ["run", "--silent", script], {
    cwd: root,
    all: true,
    reject: false,
  });
  return { code: run.exitCode, output: run.all ?? "" };
}

describe("Python suites", () => {
  it("python-runtime: python3 -m unittest passes", async () => {
    const { code, output } = await npmRun("test:py");
    expect(code, output).toBe(0);
    expect(output).toMatch(/^Ran [1-9]\d* tests? in /m);
    // 300 s: the connection clients' tests run real packages (PyGithub, openai, anthropic, the
    // Google client), installed once into a cache and imported, slow on a loaded machine.
  }, 300_000);

  it("examples: every test_handlers.py passes", async () => {
    const { code, output } = await npmRun("test:examples");
    expect(code, output).toBe(0);
    expect(output).toMatch(/^test:examples: [1-9]\d* examples? ok$/m);
  }, 120_000);
});
