import { join } from "node:path";
import { execa } from "execa";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SessionRecord } from "../src/model/records.ts";
import { useEmulator } from "./support/emulator.ts";
import { type FlakyApi, flakyApi } from "./support/flaky-api.ts";
import { repoRoot } from "./support/python.ts";
import { until } from "./support/until.ts";
import { projectVariants, standInManifest } from "./support/variants.ts";

/**
 * `cli deploy --check-replay`, real Python: a durable session parked in next_event after two
 * activities, then deploys of code that adds, removes or reorders an activity before that wait,
 * or changes an argument (each stopped, nothing changed), and of code that only adds steps
 * after it (goes ahead). The checks run no activity: the stand-in API counts no call.
 */
const MANIFEST = standInManifest("replay_rules", "  - name: approvals\n    type: webhook\n");

/** The handler: its steps before the wait (`before`) and after it (`after`), one per line. */
function handler(before: string[], after: string[] = []): string {
  const body = [
    'order = event.data.body.json["order"]',
    ...before,
    'sub = workflow_sdk.subscribe("approvals")',
    "workflow_sdk.next_event(sub)",
    ...after,
    'print("approved", order)',
  ];
  const imports = "import workflow_sdk\nfrom common import audit, charge, reserve\n";
  return `${imports}\n\ndef on_order(event):\n${body.map((l) => `    ${l}`).join("\n")}\n`;
}

const BASE = ["charge(order, 10)", "reserve(order)"];
const VARIANTS = {
  base: handler(BASE),
  added: handler(["audit(order)", ...BASE]),
  removed: handler(["charge(order, 10)"]),
  reordered: handler(["reserve(order)", "charge(order, 10)"]),
  argument: handler(["charge(order, 20)", "reserve(order)"]),
  appended: handler(BASE, ["audit(order)"]),
  // Takes every step of the base journal but the last (next_event), then returns.
  unwaited: `import workflow_sdk\nfrom common import charge, reserve\n\n\ndef on_order(event):\n    order = event.data.body.json["order"]\n    charge(order, 10)\n    reserve(order)\n    workflow_sdk.subscribe("approvals")\n`,
};

describe("cli deploy --check-replay", () => {
  const emu = useEmulator({ evictAfterMs: 300 });
  let api: FlakyApi;
  const { dirs, dispose } = projectVariants(MANIFEST, VARIANTS);
  const cli = (...args: string[]) =>
    execa("node", [join(repoRoot, "bin/cli.mjs"), ...args], {
      env: { SVC_URL: emu.url, XDG_DATA_HOME: join(emu.dataHome, "x"), SVC_API_TOKEN: "" },
      reject: false,
    });
  const deploy = (variant: keyof typeof VARIANTS, ...flags: string[]) =>
    cli("deploy", "--manifest", join(dirs[variant]!, "manifest.yaml"), ...flags);
  const active = async () =>
    (await emu.api<{ project: { active_deployment_id: string } }>("/projects/replay_rules")).project
      .active_deployment_id;

  beforeAll(async () => {
    api = await flakyApi();
  });
  afterAll(async () => {
    await api?.close();
    dispose();
  });

  it("stops a deploy whose code diverges before a parked session's wait, and lets an append through", async () => {
    const first = await deploy("base");
    expect(first.exitCode).toBe(0);
    await emu.api("/envs/replay_rules/vars/STANDIN", {
      method: "PUT",
      body: JSON.stringify({ value: api.url }),
    });
    const hooks = await emu.deploy(dirs.base!);
    const res = await fetch(hooks.order!, { method: "POST", body: '{"order": "A"}' });
    const { session_id: id } = (await res.json()) as { session_id: string };
    await until("the session parked in next_event", async () => {
      const { entries } = await emu.api<{ entries: { text?: string }[] }>(`/sessions/${id}/log`);
      return entries.some((e) => e.text?.includes("process released"));
    });
    const calls = () => [api.calls("charge-A"), api.calls("reserve-A"), api.calls("audit-A")];
    expect(calls()).toEqual([1, 1, 0]);

    const before = await active();
    const expected = {
      added: "step 0: the journal has activity common.charge; the new code activity common.audit",
      removed: "step 1: the journal has activity common.reserve; the new code subscribe()",
      reordered:
        "step 0: the journal has activity common.charge; the new code activity common.reserve",
      argument:
        "step 0: the journal has activity common.charge; the new code activity common.charge with other arguments",
    };
    for (const [variant, where] of Object.entries(expected)) {
      const r = await deploy(variant as keyof typeof VARIANTS, "--check-replay");
      expect(r.exitCode, `${variant}: ${r.stderr}`).toBe(1);
      // A deploy that takes over 1.5 s (a busy machine) also says `deploying…` on stderr.
      const errors = r.stderr.split("\n").filter((line) => !line.startsWith("deploying… "));
      expect(errors).toEqual([
        'error: deploy stopped, nothing changed: 1 in-flight durable session of "replay_rules" diverges from the new code (--force deploys anyway)',
        `[check] ${id} (in flight) diverges at ${where}`,
        '[check] replayed 1 in-flight and 0 ended durable sessions of "replay_rules" against the new build: 1 diverges (1 in flight)',
      ]);
      expect(await active(), variant).toBe(before);
    }
    // The checks ran no activity: nothing reached the stand-in.
    expect(calls()).toEqual([1, 1, 0]);

    // The API and the UI's deploy page have the last report.
    const { replay_check: report } = await emu.api<{ replay_check: Record<string, unknown> }>(
      "/projects/replay_rules/replay-check",
    );
    expect(report).toMatchObject({ outcome: "stopped", diverging: [{ session_id: id, step: 0 }] });
    const page = await (await fetch(`${emu.url}/ui/projects/replay_rules/deploy`)).text();
    expect(page).toContain(`/ui/sessions/${id}`);
    expect(page).toContain("the deploy did not happen, nothing changed");

    // Steps added after the parked point: the session replays, the deploy goes ahead.
    const ok = await deploy("appended", "--check-replay", "5");
    expect(ok.exitCode, ok.stderr).toBe(0);
    expect(ok.stdout).toContain(
      '[check] replayed 1 in-flight and 0 ended durable sessions of "replay_rules" against the new build: none diverges',
    );
    expect(ok.stdout.split("\n").at(-1)).toBe("[exec] activate_deployment: activated");
    expect(await active()).not.toBe(before);

    // Without the flag a deploy says, in one line, what it did not check.
    const unchecked = await deploy("appended");
    expect(unchecked.stdout).toContain(
      '[plan] sessions "replay_rules": 1 durable session in flight, not replayed against the new code (cli deploy --check-replay checks them first)',
    );

    // --force deploys over a divergence, and says so.
    const forced = await deploy("reordered", "--check-replay", "--force");
    expect(forced.exitCode).toBe(0);
    expect(forced.stdout).toContain(`[check] ${id} (in flight) diverges at ${expected.reordered}`);
    expect(forced.stdout).toContain("[check] --force: deploying anyway");

    // The session ends (on the deployment it started on); ended, it is reported, never blocking.
    await fetch(hooks.approvals!, { method: "POST", body: "{}" });
    const record: SessionRecord = await emu.ended(id);
    expect(record.state).toBe("completed");
    const after = await deploy("added", "--check-replay");
    expect(after.exitCode).toBe(0);
    expect(after.stdout).toContain(`[check] ${id} (ended completed) diverges at ${expected.added}`);
    expect(after.stdout).toContain(
      '[check] replayed 0 in-flight and 1 ended durable sessions of "replay_rules" against the new build: 1 diverges (0 in flight)',
    );
    expect(calls()).toEqual([1, 1, 0]);
  }, 180_000);

  /** A session of the active code for `order`, driven to its end (its wait answered). */
  async function endedSession(order: string): Promise<string> {
    const { project } = await emu.api<{ project: { id: string } }>("/projects/replay_rules");
    const { triggers } = await emu.api<{ triggers: { name: string; webhook_path: string }[] }>(
      `/triggers?project=${project.id}`,
    );
    const hooks = Object.fromEntries(triggers.map((t) => [t.name, emu.url + t.webhook_path]));
    const res = await fetch(hooks.order!, { method: "POST", body: JSON.stringify({ order }) });
    const { session_id: id } = (await res.json()) as { session_id: string };
    await until(`session ${order} waits for an approval`, async () => {
      const { journal } = await emu.api<{ journal: { kind: string }[] }>(`/sessions/${id}/log`);
      return journal.some((s) => s.kind === "subscribe");
    });
    await fetch(hooks.approvals!, { method: "POST", body: "{}" });
    expect((await emu.ended(id)).state).toBe("completed");
    return id;
  }

  /** Deploys `variant` with the stand-in's URL set (the var is kept across deploys). */
  async function deployWithStandIn(variant: keyof typeof VARIANTS) {
    expect((await deploy(variant)).exitCode).toBe(0);
    await emu.api("/envs/replay_rules/vars/STANDIN", {
      method: "PUT",
      body: JSON.stringify({ value: api.url }),
    });
  }

  it("checks the newest N ended sessions, not the oldest", async () => {
    await deployWithStandIn("base");
    await endedSession("B"); // journal: charge, reserve, subscribe, next_event
    await deployWithStandIn("added");
    const newer = await endedSession("C"); // audit, charge, reserve, subscribe, next_event

    // --check-replay 1: the newest ended session only (it diverges from base; the older does not).
    const one = await deploy("base", "--check-replay", "1");
    expect(one.exitCode, one.stderr).toBe(0);
    expect(one.stdout).toContain(
      `[check] ${newer} (ended completed) diverges at step 0: the journal has activity common.audit; the new code activity common.charge`,
    );
    expect(one.stdout).toContain(
      '[check] replayed 0 in-flight and 1 ended durable sessions of "replay_rules" against the new build: 1 diverges (0 in flight)',
    );
  }, 180_000);

  it("finds code that takes every step but the journal's last one, then returns", async () => {
    await deployWithStandIn("base");
    const id = await endedSession("D"); // journal: charge, reserve, subscribe, next_event
    const early = await deploy("unwaited", "--check-replay", "10");
    expect(early.exitCode, early.stderr).toBe(0);
    expect(early.stdout).toContain(
      `[check] ${id} (ended completed) diverges at step 3: the journal has next_event(); the new code returns`,
    );
  }, 180_000);

  it("refuses a bad N, saying why", async () => {
    const r = await deploy("base", "--check-replay", "many");
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toContain(
      'error: --check-replay: expected a number of ended sessions, got "many"',
    );
    const force = await deploy("base", "--force");
    expect(force.stderr).toContain("error: --force goes with --check-replay");
  });
});
