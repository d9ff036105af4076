import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { afterAll, describe, expect, it } from "vitest";
import { repoRoot } from "../test/support/python.ts";

/**
 * The README's `npm start` on a fresh data home with no package index reachable (pip's default
 * index a closed port, no pip.conf, no wheel folder): the real first start, venv and pre-install
 * included, read as a user reads it: stdout and stderr as one terminal.
 */
describe("a first start with no package index reachable", () => {
  let home = "";
  let child: ChildProcess | null = null;
  afterAll(async () => {
    if (child?.exitCode === null) {
      const exited = new Promise((ok) => child?.once("exit", ok));
      process.kill(-child.pid!, "SIGTERM");
      await exited;
    }
    if (home) await rm(home, { recursive: true, force: true });
  });

  it("says what it does, sums up the packages it could not have in one line, and prints the URL last, boxed", async () => {
    home = await mkdtemp(join(tmpdir(), "hookline-first-start-"));
    const env = Object.fromEntries(
      Object.entries(process.env).filter(([k]) => !/^(SVC_|PIP_)/.test(k)),
    );
    child = spawn(
      "node",
      [
        "bin/cli.mjs",
        "up",
        "--mode",
        "dev",
        "--port",
        "0",
        "--deploy",
        "examples/hello/manifest.yaml",
      ],
      {
        cwd: repoRoot,
        detached: true,
        env: {
          ...env,
          XDG_DATA_HOME: join(home, "data"),
          XDG_CONFIG_HOME: join(home, "config"),
          PIP_CONFIG_FILE: "/dev/null",
          PIP_INDEX_URL: "http://127.0.0.1:9/simple",
        },
      },
    );
    const terminal: string[] = [];
    const boxed = new Promise<void>((ok, fail) => {
      for (const stream of [child!.stdout!, child!.stderr!]) {
        createInterface({ input: stream }).on("line", (line) => {
          terminal.push(line);
          // The URL's line, and a moment for the lines after it (there should be one: the box's).
          if (line.includes('webhook "hello"')) setTimeout(ok, 1000);
        });
      }
      child!.once("exit", (code) => fail(new Error(`exited ${code}:\n${terminal.join("\n")}`)));
    });
    await boxed;
    const said = terminal.join("\n");

    expect(said).toMatch(/creating the Python environment at .+, once: later starts reuse it/);
    expect(said).toContain("installing 1/34 anthropic (");
    // One line for the 34 packages, with the reason and where pip's errors are; none of its own.
    const summary = terminal.filter((l) => l.includes("pre-installed packages:"));
    expect(summary).toHaveLength(1);
    expect(summary[0]).toMatch(
      /pre-installed packages: none of 34 installed \((\d+ s|\d+m\d\ds)\); 34 not: offline: no package index reachable: anthropic, asana, .+, tenacity \(tried http:\/\/127\.0\.0\.1:9\/simple\); pip's first error for each in .+\/venv\/preinstall\.log; install one later with: /,
    );
    expect(terminal.filter((l) => l.includes("not installed"))).toEqual([]);
    // The URL last, in a box.
    expect(terminal.at(-3)).toMatch(/^╭─+╮$/);
    expect(terminal.at(-2)).toMatch(
      /^│ webhook "hello": http:\/\/127\.0\.0\.1:\d+\/webhooks\/[0-9a-z]{26} │$/,
    );
    expect(terminal.at(-1)).toMatch(/^╰─+╯$/);
    expect(terminal.indexOf(summary[0]!)).toBeLessThan(terminal.length - 3);
  }, 240_000);
});
