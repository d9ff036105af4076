import { EventEmitter } from "node:events";
import { mkdtemp, readFile, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { defineCommand } from "citty";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Io } from "../src/cli/io.ts";
import { rootCommand, run } from "../src/cli/main.ts";
import { fakeIo } from "../test/support/cli.ts";
import { main } from "./cli.ts";
import upCommand, { ensureToken } from "./up-command.ts";

let tmp: string;

beforeEach(async () => {
  tmp = await mkdtemp(join(tmpdir(), "hookline-up-"));
});

afterEach(async () => {
  await rm(tmp, { recursive: true, force: true });
});

async function cli(argv: string[], root: (io: Io) => ReturnType<typeof defineCommand>) {
  const captured = fakeIo({ env: {} });
  const code = await run(argv, captured.io, root(captured.io));
  return { code, out: captured.out, err: captured.err };
}

describe("up", () => {
  it("starts the emulator, prints where, and closes on a signal", async () => {
    const signals = new EventEmitter();
    const exits: number[] = [];
    let closed = 0;
    let seenSettings: unknown;
    const root = (io: Io) =>
      defineCommand({
        subCommands: {
          up: upCommand(io, {
            signals: signals as unknown as Pick<NodeJS.Process, "on">,
            exit: (code) => void exits.push(code),
            startEmulator: async (settings, { log }) => {
              seenSettings = settings;
              log("worker pool ready");
              return {
                url: `http://${settings.host}:${settings.port}`,
                close: async () => void closed++,
              };
            },
          }),
        },
      });
    const r = await cli(["up", "--port", "0", "--host", "127.0.0.1", "--storage", "memory:"], root);
    expect(r.code).toBe(0);
    expect(r.out[0]).toBe("hookline listening on http://127.0.0.1:0 (mode dev)");
    expect(r.out[1]).toMatch(/^data home: /);
    expect(r.err).toContain("worker pool ready");
    expect(seenSettings).toMatchObject({ mode: "dev", port: 0, storage: "memory:" });
    signals.emit("SIGINT");
    await new Promise((ok) => setTimeout(ok, 10));
    expect(closed).toBe(1);
    expect(exits).toEqual([0]);
  });

  it("makes a 0600 token in the config home in prod mode", async () => {
    const home = join(tmp, "config");
    const token = await ensureToken(home);
    expect(token).toMatch(/^[0-9a-f]{64}$/);
    expect((await stat(join(home, "token"))).mode & 0o777).toBe(0o600);
    expect(await ensureToken(home)).toBe(token);
    expect((await readFile(join(home, "token"), "utf8")).trim()).toBe(token);
  });
});

describe("up's arguments", () => {
  const host = { up: (io: Io) => Promise.resolve(upCommand(io)) };
  it.each([
    [["up", "--port", "99999"], "--port", "USAGE cli up"],
    [["up", "--mode", "staging"], "--mode", "USAGE cli up"],
  ])("refuses %j with usage on stderr and exit code 1", async (argv, message, heading) => {
    const { io, out, err } = fakeIo();
    expect(await run(argv, io, rootCommand(io, host))).toBe(1);
    expect(out).toEqual([]);
    const text = err.join("\n");
    expect(text).toContain(heading);
    expect(err.at(-1)).toMatch(/^error: /);
    expect(err.at(-1)).toContain(message);
    expect(text).not.toContain("\u001b["); // no colour codes
  });

  it("is part of the emulator's cli", () => {
    expect(typeof main).toBe("function");
  });
});
