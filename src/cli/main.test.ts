import { fileURLToPath } from "node:url";
import { execa } from "execa";
import { describe, expect, it } from "vitest";
import { fakeIo } from "../../test/support/cli.ts";
import { FORMAT_VERSION } from "../storage/format.ts";
import { run } from "./main.ts";

const bin = fileURLToPath(new URL("../../bin/cli.mjs", import.meta.url));

describe("argument handling", () => {
  it("prints usage on --help and exits 0", async () => {
    const { io, out, err } = fakeIo();
    expect(await run(["--help"], io)).toBe(0);
    expect(out.join("\n")).toContain("USAGE cli");
    expect(out.join("\n")).toContain("session");
    expect(err).toEqual([]);
  });

  it("prints a subcommand's usage on --help, wherever the flag stands", async () => {
    for (const argv of [
      ["session", "prints", "--help"],
      ["session", "--help", "prints"],
      ["-h", "session", "prints"],
    ]) {
      const { io, out } = fakeIo();
      expect(await run(argv, io)).toBe(0);
      expect(out.join("\n")).toContain("USAGE cli session prints");
      expect(out.join("\n")).toContain("--no-timestamps");
    }
  });

  it("prints a group's usage on --help", async () => {
    const { io, out } = fakeIo();
    expect(await run(["var", "--help"], io)).toBe(0);
    expect(out.join("\n")).toMatch(/set\s+Set a variable/);
  });

  it("prints the version", async () => {
    const { io, out } = fakeIo();
    expect(await run(["--version"], io)).toBe(0);
    expect(out[0]).toMatch(/^\d+\.\d+\.\d+/);
  });

  it.each([
    [[], "missing command", "USAGE cli "],
    [["bogus"], 'unknown command "bogus"', "USAGE cli "],
    [["session"], "missing command", "USAGE cli session "],
    [["session", "nope"], 'unknown command "nope"', "USAGE cli session "],
    [["config", "where", "--bogus"], 'unknown option "--bogus"', "USAGE cli config where"],
    [["config", "where", "extra"], 'unexpected argument "extra"', "USAGE cli config where"],
    [["var", "set", "--env", "demo"], "NAME", "USAGE cli var set"],
    [["var", "set", "X"], "--env", "USAGE cli var set"],
    [["var", "set", "X", "--env"], "--env", "USAGE cli var set"],
    [["session", "list", "--state", "bogus"], "--state", "USAGE cli session list"],
    [["session", "list", "--limit", "ten"], "--limit", "USAGE cli session list"],
    [["session", "log"], "ID", "USAGE cli session log"],
  ])("refuses %j with usage on stderr and exit code 1", async (argv, message, heading) => {
    const { io, out, err } = fakeIo();
    expect(await run(argv, io)).toBe(1);
    expect(out).toEqual([]);
    const text = err.join("\n");
    expect(text).toContain(heading);
    expect(err.at(-1)).toMatch(/^error: /);
    expect(err.at(-1)).toContain(message);
    expect(text).not.toContain("\u001b["); // no colour codes
  });

  it("never echoes a value that starts with '-' (a pasted key) in its refusal", async () => {
    const { io, err } = fakeIo();
    const key = "-----BEGIN PRIVATE KEY-----MIIEvQIBADANBg";
    expect(await run(["var", "set", "--secret", "--env", "demo", "K", key], io)).toBe(1);
    expect(err.at(-1)).toMatch(/^error: unknown option: an argument starting with "-"/);
    expect(err.join("\n")).not.toContain("BEGIN");
  });

  it("reports an unreachable service in one line", async () => {
    const { io, out, err } = fakeIo({ env: { SVC_URL: "http://127.0.0.1:9" } });
    expect(await run(["env", "list"], io)).toBe(1);
    expect(out).toEqual([]);
    expect(err).toEqual([
      "error: cannot reach the service at http://127.0.0.1:9: is it running? (start it with: npx cli up --mode dev)",
    ]);
  });
});

describe("bin/cli.mjs", () => {
  it("exits 1 on a usage error, with usage on stderr", async () => {
    const r = await execa("node", [bin, "trigger", "lst"], { reject: false });
    expect(r.exitCode).toBe(1);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain("USAGE cli trigger");
    expect(r.stderr.split("\n").at(-1)).toBe('error: unknown command "lst"');
  });

  it("exits 0 on --help and on a command that works", async () => {
    const help = await execa("node", [bin, "deploy", "--help"], { reject: false });
    expect(help.exitCode).toBe(0);
    expect(help.stdout).toContain("--manifest");
    const where = await execa("node", [bin, "config", "where"], {
      reject: false,
      env: { XDG_DATA_HOME: "/tmp/d", XDG_CONFIG_HOME: "/tmp/c", SVC_URL: "http://x:1" },
    });
    expect(where.exitCode).toBe(0);
    expect(where.stdout.split("\n")).toEqual([
      "data home: /tmp/d/hookline  (XDG_DATA_HOME)",
      "config home: /tmp/c/hookline  (XDG_CONFIG_HOME)",
      "storage: lmdb (sync=normal)  /tmp/d/hookline/db/data.mdb  (SVC_STORAGE)",
      `storage format: none yet (this release writes ${FORMAT_VERSION})`,
      "venv: /tmp/d/hookline/venv",
      "service: http://x:1  (SVC_URL)",
    ]);
  });

  it("exits 1 with one error line when the service is down", async () => {
    const r = await execa("node", [bin, "trigger", "list"], {
      reject: false,
      env: { SVC_URL: "http://127.0.0.1:9", SVC_API_TOKEN: "" },
    });
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toBe(
      "error: cannot reach the service at http://127.0.0.1:9: is it running? (start it with: npx cli up --mode dev)",
    );
  });
});
