import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { fakeIo, fakeService, json, type Seen } from "../../test/support/cli.ts";
import { sessionRecord } from "../../test/support/records.ts";
import { run } from "./main.ts";
import { sessionHeader } from "./output.ts";
import { sessionTable } from "./session.ts";
import { parseInputs } from "./session-start.ts";

/** `cli session start`: what it sends, how it reads `--input`, and what it refuses unsent. */
let svc: Awaited<ReturnType<typeof fakeService>>;
const seen: Seen[] = [];

beforeEach(async () => {
  seen.length = 0;
  svc = await fakeService((req, res) => {
    seen.push(req);
    const manual = sessionRecord({ id: "ses_m", state: "created", manual: true });
    json(res, 201, { session: { ...manual, trigger_id: "", trigger_name: "" } });
  });
});
afterEach(() => svc.close());

async function cli(...argv: string[]) {
  const captured = fakeIo({ env: { SVC_URL: svc.url } });
  const code = await run(argv, captured.io);
  return { code, out: captured.out, err: captured.err };
}

describe("cli session start", () => {
  it("posts the entry point, the inputs as JSON values and durable", async () => {
    const r = await cli(
      "session",
      "start",
      "--project",
      "demo",
      "--entrypoint",
      "program.py:on_manual_run",
      "--input",
      'user="ada"',
      "--input=n=3",
      "-i",
      'opts={"dry": true, "tags": ["a"]}',
      "--durable",
    );
    expect(r).toEqual({
      code: 0,
      out: ["session ses_m: created (program.py:on_manual_run, started by hand)"],
      err: [],
    });
    expect(seen.map((s) => `${s.method} ${s.url}`)).toEqual([
      "POST /api/v1/projects/demo/sessions",
    ]);
    expect(JSON.parse(seen[0]!.body)).toEqual({
      entrypoint: "program.py:on_manual_run",
      inputs: { user: "ada", n: 3, opts: { dry: true, tags: ["a"] } },
      durable: true,
    });
  });

  it("sends {} without inputs, and not durable", async () => {
    await cli("session", "start", "-p", "demo", "-e", "program.py:main");
    expect(JSON.parse(seen[0]!.body)).toEqual({
      entrypoint: "program.py:main",
      inputs: {},
      durable: false,
    });
  });

  it("refuses an input that is not key=<JSON value> in one line, sending nothing", async () => {
    for (const bad of ["user=ada", "=1", "novalue", "n={"]) {
      const r = await cli("session", "start", "-p", "demo", "-e", "a.py:f", "--input", bad);
      expect(r.code, bad).toBe(1);
      expect(r.err, bad).toHaveLength(1);
      expect(r.err[0]).toMatch(new RegExp(`^error: --input "${bad.replace(/[{]/g, "\\{")}"`));
    }
    expect(r0(await cli("session", "start", "-p", "demo", "-e", "a.py:f", "-i", "u=ada"))).toBe(
      `error: --input "u=ada": "ada" is not a JSON value (a string is quoted: u='"ada"')`,
    );
    expect(seen).toEqual([]);
  });

  it("lists and logs a manual run as started by hand", () => {
    const manual = sessionRecord({ manual: true, trigger_id: "", trigger_name: "" });
    expect(sessionTable([manual])[1]).toMatch(
      /^ses_01 {2}demo {5}\(started by hand\) {2}completed/,
    );
    expect(sessionHeader(manual)).toBe(
      "session ses_01 demo (started by hand) (handlers.py:on_hook, async) completed",
    );
  });

  it("reads the last of repeated keys, as AutoKitteh does", () => {
    expect(parseInputs(["a=1", "a=2", 'b=""'])).toEqual({ a: 2, b: "" });
  });
});

const r0 = (r: { err: string[] }) => r.err[0];
