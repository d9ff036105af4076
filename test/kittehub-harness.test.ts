// The kittehub harness (test/kittehub/run.ts), as a person runs it, on a mini kittehub of our
// own (test/fixtures/kittehub-mini): the real CLI process, the real service, real Python, the
// stand-in API. What it reports about kittehub's projects (docs/autokitteh.md) is only as good
// as its checks, so they are tried here both ways.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { execa } from "execa";
import { afterAll, describe, expect, it } from "vitest";
import { repoRoot } from "./support/python.ts";

const MINI = join(import.meta.dirname, "fixtures", "kittehub-mini");
const tmp = mkdtempSync(join(tmpdir(), "kittehub-harness-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** `npx tsx test/kittehub/run.ts …`, its workflow_sdk-only Python environment. */
const harness = (...args: string[]) =>
  execa("npx", ["tsx", "test/kittehub/run.ts", "--kittehub", MINI, ...args], {
    cwd: repoRoot,
    reject: false,
    env: { KITTEHUB_PREINSTALL: "off" },
  });

interface Fire {
  what: string;
  ok: boolean;
  state: string;
  error: string;
  prints_missing: string[];
}
interface Result {
  project: string;
  verdict: string;
  fires: Fire[];
  calls: string[];
}

describe("the kittehub harness", () => {
  it("deploys each project unchanged, fires its webhooks and a signed Slack event, and says which ended as expected", async () => {
    const out = join(tmp, "mini.json");
    const r = await harness("--plan", join(MINI, "plan.yaml"), "--out", out);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout).toContain("2 projects: 1 runs, 1 partly, 0 blocked");
    const [alerts, broken] = JSON.parse(readFileSync(out, "utf8")) as Result[];
    expect(alerts).toMatchObject({ project: "alerts", verdict: "runs" });
    expect(alerts!.fires.map((f) => [f.what, f.ok, f.state])).toEqual([
      ["webhook alert (POST)", true, "completed"],
      ["event slack on slack_conn", true, "completed"],
    ]);
    expect(alerts!.calls).toContainEqual(expect.stringMatching(/^POST \/api\/chat\.postMessage/));
    // A session's own error, and a print its code never made, each fail their fire.
    expect(broken!.verdict).toBe("partly");
    const [fine, fails, missing] = broken!.fires;
    expect(fine).toMatchObject({ ok: true, state: "completed" });
    expect(fails).toMatchObject({ ok: false, state: "error" });
    expect(fails!.error).toContain("KeyError: 'missing'");
    expect(missing).toMatchObject({ ok: false, state: "completed" });
    expect(missing!.prints_missing).toEqual(["not printed"]);
  }, 240_000); // a fresh clone makes the harness's Python first; a full suite on two cores is slow

  it("refuses a bad plan in one line naming the entry and the field, running nothing", async () => {
    const cases: [string, string][] = [
      ["- project: alerts\n  fire: [{webhook: alert, jsn: {}}]\n", "entry 1 (alerts).fire[0].jsn"],
      ["- project: nowhere\n  fire: [{webhook: x}]\n", "entry 1 (nowhere).project: no nowhere"],
    ];
    for (const [i, [text, named]] of cases.entries()) {
      const plan = join(tmp, `bad-${i}.yaml`);
      writeFileSync(plan, text);
      const r = await harness("--plan", plan);
      expect(r.exitCode).toBe(2);
      expect(r.stderr.trim().split("\n")).toEqual([expect.stringContaining(named)]);
      expect(r.stdout).not.toContain("service at");
    }
  });
});
