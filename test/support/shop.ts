// A project "shop" (triggers orders and refunds) on a fake runtime, served over HTTP: the UI's
// in-process browser tests start here. An order whose body is "fail" fails ("card declined");
// "slow" runs two activities (150 ms, 50 ms) and then fails. "hold" waits for `release()`, runs
// one activity (shop.pack) that runs until `release()`, waits for `release()` again, and
// completes.
import { expect } from "vitest";
import type { ComposedService } from "../../src/platform/compose.ts";
import { deployBody, type Fetch, type TestAppOptions, targets } from "./app.ts";
import { fakeRuntime } from "./fake-runtime.ts";

const MANIFEST = `version: v2
project: { name: shop }
triggers:
  - { name: orders, type: webhook, call: "handlers.py:on_order" }
  - { name: refunds, type: webhook, call: "handlers.py:on_refund" }
`;
const FILES = {
  "handlers.py": "def on_order(event):\n    pass\n\ndef on_refund(event):\n    pass\n",
};

export interface Shop {
  hook: ComposedService;
  /** The server's origin, `http://127.0.0.1:<port>`. */
  base: string;
  /** The service's own fetch (paths). */
  fetch: Fetch;
  /** Sends a body to a trigger's webhook; resolves with the session id once it ended. */
  send(trigger: "orders" | "refunds", body: string): Promise<string>;
  /** Sends a body to a trigger's webhook; resolves with the session id at once. */
  start(trigger: "orders" | "refunds", body: string): Promise<string>;
  /** Lets a "hold" order past its next wait (or its next one to come). */
  release(): void;
}

/** @example const shop = await shopService(); await shop.send("orders", "fail"); */
export async function shopService(opts: TestAppOptions = {}): Promise<Shop> {
  const gate = holdGate();
  const fake = fakeRuntime({
    "handlers.py:on_order": async (spec, wf) => {
      const body = (spec.event.data as { body: { text: string } }).body.text;
      wf.print(`order ${body}\n`, "stdout");
      if (body === "slow") {
        // Two activities, 150 ms and 50 ms: the session page's waterfall draws them.
        await wf.activity("shop.reserve", () => new Promise((r) => setTimeout(r, 150)));
        await wf.activity("shop.charge", () => new Promise((r) => setTimeout(r, 50)));
        throw new Error("card declined after reserving");
      }
      if (body === "fail") throw new Error("card declined");
      if (body === "hold") {
        await gate.wait();
        await wf.activity("shop.pack", () => gate.wait()); // in flight until released
        await gate.wait();
      }
    },
    "handlers.py:on_refund": () => {},
  });
  // No OAuth app configured, whatever this machine's environment holds.
  const made = await targets[1]!.make(fake.runtime, { oauthSettings: {}, ...opts });
  const hook = made.hook;
  const base = new URL((await made.fetch("/healthz")).url).origin;
  const res = await made.fetch("/api/v1/deploy", deployBody(MANIFEST, FILES));
  expect(res.status).toBe(200);
  const listed = (await (await made.fetch("/api/v1/triggers?project=shop")).json()) as {
    triggers: { name: string; webhook_path: string }[];
  };
  const hooks = Object.fromEntries(listed.triggers.map((t) => [t.name, t.webhook_path]));
  const start = async (trigger: string, body: string) => {
    const r = await fetch(`${base}${hooks[trigger]}`, { method: "POST", body });
    return ((await r.json()) as { session_id: string }).session_id;
  };
  return {
    hook,
    base,
    fetch: made.fetch,
    start,
    release: gate.release,
    async send(trigger, body) {
      const id = await start(trigger, body);
      await hook.sessions.whenEnded(id);
      return id;
    },
  };
}

/** Waits a "hold" order makes: each `release()` lets one through, waiting or to come. */
function holdGate() {
  const waiting: (() => void)[] = [];
  let credit = 0;
  return {
    wait: () =>
      new Promise<void>((resolve) => {
        if (credit > 0) {
          credit--;
          resolve();
        } else waiting.push(resolve);
      }),
    release: () => {
      const next = waiting.shift();
      if (next) next();
      else credit++;
    },
  };
}
