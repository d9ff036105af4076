import { join } from "node:path";
import { execa } from "execa";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SessionRecord } from "../src/model/records.ts";
import { useEmulator } from "./support/emulator.ts";
import { type FlakyApi, flakyApi } from "./support/flaky-api.ts";
import { repoRoot } from "./support/python.ts";
import { projectVariants, standInManifest } from "./support/variants.ts";

/**
 * Re-running a durable session from its failed step (or step N), real Python, through the CLI
 * as a user types it: the steps before are replayed from the old journal (the stand-in API counts
 * that they are not called again), the rest runs the current deployment's code; refused, with
 * the reason, for a session that is not durable, one that did not fail, and code that diverges.
 */
const MANIFEST = standInManifest(
  "rerun_rules",
  "  - name: quick\n    type: webhook\n    call: handlers.py:on_quick\n",
);

/** A handler that makes `steps` (calls of common.py's activities), then prints `done`. */
const handler = (steps: string[], done: string) =>
  [
    "from common import charge, notify, reserve, ship",
    "",
    "",
    "def on_order(event):",
    '    order = event.data.body.json["order"]',
    ...steps.map((s) => `    ${s}(order${s === "charge" ? ", 10" : ""})`),
    `    print("${done}", order)`,
    "",
    "",
    "def on_quick(event):",
    '    print("quick")',
    "",
  ].join("\n");

// v1 fails at ship (its first call); v2 adds a step after it; swapped calls reserve first.
const VERSIONS = {
  v1: handler(["charge", "reserve", "ship"], "v1 done"),
  v2: handler(["charge", "reserve", "ship", "notify"], "v2 done"),
  swapped: handler(["reserve", "charge", "ship"], "swapped done"),
};

describe("cli session rerun --from-failure / --from-step", () => {
  const emu = useEmulator();
  let api: FlakyApi;
  let hooks: Record<string, string>;
  const cli = (...args: string[]) =>
    execa("node", [join(repoRoot, "bin/cli.mjs"), ...args], {
      env: { SVC_URL: emu.url, XDG_DATA_HOME: join(emu.dataHome, "x"), SVC_API_TOKEN: "" },
      reject: false,
    });

  const versions = projectVariants(MANIFEST, VERSIONS);
  async function deploy(version: keyof typeof VERSIONS): Promise<void> {
    hooks = await emu.deploy(versions.dirs[version]!);
    const body = JSON.stringify({ value: api.url });
    await emu.api("/envs/rerun_rules/vars/STANDIN", { method: "PUT", body });
  }

  async function order(name: string, trigger = "order"): Promise<SessionRecord> {
    const res = await fetch(hooks[trigger]!, {
      method: "POST",
      body: JSON.stringify({ order: name }),
    });
    return emu.ended(((await res.json()) as { session_id: string }).session_id);
  }

  /** Calls the stand-in received for `order`, by activity. */
  const calls = (name: string) =>
    Object.fromEntries(
      ["charge", "reserve", "ship", "notify"].map((w) => [w, api.calls(`${w}-${name}`)]),
    );

  const sessionCount = async () =>
    (await emu.api<{ sessions: unknown[] }>("/sessions?project=rerun_rules&limit=1000")).sessions
      .length;

  beforeAll(async () => {
    api = await flakyApi();
  });
  afterAll(async () => {
    await api?.close();
    versions.dispose();
  });

  it("finishes a failed session with the fixed code, repeating none of the steps before", async () => {
    await deploy("v1");
    const failed = await order("A");
    expect(failed.state).toBe("error");
    expect(failed.error?.message).toBe("ConnectionError: ship: stand-in answered 503");
    expect(calls("A")).toEqual({ charge: 1, reserve: 1, ship: 1, notify: 0 });

    // Code that calls its activities in another order cannot reuse the journal: refused.
    await deploy("swapped");
    const before = await sessionCount();
    const refused = await cli("session", "rerun", failed.id, "--from-failure");
    expect(refused.exitCode).toBe(1);
    expect(refused.stderr).toMatch(
      new RegExp(
        `^error: session "${failed.id}" cannot be re-run from step 2 on deployment dep_\\w+: ` +
          "the current code diverges at step 0 \\(the journal has activity common.charge; " +
          "the code activity common.reserve\\)$",
      ),
    );
    expect(await sessionCount()).toBe(before);
    expect(calls("A")).toEqual({ charge: 1, reserve: 1, ship: 1, notify: 0 });

    await deploy("v2");
    const r = await cli("session", "rerun", failed.id, "--from-failure");
    expect(r.exitCode).toBe(0);
    const id = /^session (ses_\w+): created \(re-run of (ses_\w+), steps 0-1 reused\)$/.exec(
      r.stdout,
    );
    expect(id?.[2]).toBe(failed.id);
    const rerun = await emu.ended(id![1]!);
    expect(rerun.state).toBe("completed");
    expect(rerun).toMatchObject({ rerun_of: failed.id, rerun_from_step: 2, durable: true });
    // charge and reserve came from the old journal; ship ran again, and v2's new step after it.
    expect(calls("A")).toEqual({ charge: 1, reserve: 1, ship: 2, notify: 1 });
    expect(await emu.prints(rerun.id)).toEqual(["v2 done A"]);
    const log = await cli("session", "log", rerun.id);
    expect(log.stdout.split("\n")[1]).toBe(`re-run of ${failed.id}, its first 2 steps reused`);
    expect(log.stdout).toContain(
      `state: running (re-run of ${failed.id}: replaying 2 of its journal steps)`,
    );

    // A session that did not fail has no failed step; --from-step re-runs it from any step.
    const notFailed = await cli("session", "rerun", rerun.id, "--from-failure");
    expect(notFailed.stderr).toBe(
      `error: session "${rerun.id}" ended in completed, not error: --from-failure re-runs a failed session (--from-step N re-runs from any step)`,
    );
    const fromOne = await cli("session", "rerun", rerun.id, "--from-step", "1");
    expect(fromOne.exitCode).toBe(0);
    const again = await emu.ended(/^session (ses_\w+)/.exec(fromOne.stdout)![1]!);
    expect(again.state).toBe("completed");
    expect(calls("A")).toEqual({ charge: 1, reserve: 2, ship: 3, notify: 2 });
    const tooFar = await cli("session", "rerun", rerun.id, "--from-step", "9");
    expect(tooFar.stderr).toBe(
      `error: step 9: session "${rerun.id}" has 4 journal steps; re-run from 0 to 4`,
    );
  }, 120_000);

  it("refuses a session that is not durable, saying why", async () => {
    await deploy("v1");
    const quick = await order("Q", "quick");
    expect(quick.state).toBe("completed");
    const r = await cli("session", "rerun", quick.id, "--from-step", "0");
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toBe(
      `error: session "${quick.id}" is not durable: it keeps no journal to re-run from; re-run it whole (without --from-failure or --from-step)`,
    );
    const both = await cli("session", "rerun", quick.id, "--from-step", "1", "--from-failure");
    expect(both.stderr).toContain("error: give --from-failure or --from-step, not both");
  });

  it("has a button on the session page of a failed durable session", async () => {
    await deploy("v1");
    const failed = await order("U");
    const page = await fetch(`${emu.url}/ui/sessions/${failed.id}`);
    const html = await page.text();
    expect(html).toContain(`action="/ui/sessions/${failed.id}/rerun?from=failure"`);
    await deploy("v2");
    const cookie = page.headers.get("set-cookie")!.split(";")[0]!;
    const csrf = /name="_csrf" value="([^"]+)"/.exec(html)![1]!;
    const res = await fetch(`${emu.url}/ui/sessions/${failed.id}/rerun?from=failure`, {
      method: "POST",
      headers: { cookie, origin: emu.url, "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ _csrf: csrf }),
      redirect: "manual",
    });
    expect(res.status).toBe(303);
    const newId = res.headers.get("location")!.split("/").at(-1)!;
    expect((await emu.ended(newId)).state).toBe("completed");
    expect(calls("U")).toEqual({ charge: 1, reserve: 1, ship: 2, notify: 1 });
    const rerunPage = await (await fetch(`${emu.url}/ui/sessions/${newId}`)).text();
    expect(rerunPage).toContain("<dt>Re-run of</dt>");
    expect(rerunPage).not.toContain("rerun?from=failure"); // it did not fail
  });
});
