import { describe, expect, it } from "vitest";
import { deployBody, targets } from "./support/app.ts";
import { fakeRuntime } from "./support/fake-runtime.ts";
import { githubDelivery } from "./support/signing.ts";
import { until } from "./support/until.ts";

/**
 * A delivery refused for want of room (503) was not taken: its delivery key is let go, so the
 * sender's retry with the same key goes on as a first delivery, on both delivery routes.
 */
const MANIFEST = `
version: v2
project:
  name: full
  connections:
    - name: gh
      integration: github
      vars: [{name: webhook_secret, value: gh-k, secret: true}]
  triggers:
    - {name: hold, type: webhook, call: "handlers.py:hold"}
    - {name: hook, type: webhook, call: "handlers.py:quick"}
    - {name: push, connection: gh, event_type: push, call: "handlers.py:quick"}
`;
const FILES = { "handlers.py": "def hold(e):\n    pass\n\ndef quick(e):\n    pass\n" };

for (const target of targets) {
  describe(`a refused delivery (${target.name})`, () => {
    it("lets its key go: nothing kept, and a retry with the same key is a first delivery", async () => {
      let release = () => {};
      const held = new Promise<void>((r) => (release = r));
      const fake = fakeRuntime({ "handlers.py:hold": () => held, "handlers.py:quick": () => {} });
      const { fetch, hook } = await target.make(fake.runtime, {
        limits: { sessions: { maxActive: 1 } },
      });
      const deployed = await fetch("/api/v1/deploy", deployBody(MANIFEST, FILES));
      const { connections } = (await deployed.json()) as {
        connections: { name: string; inbound_path: string }[];
      };
      const inbound = connections[0]!.inbound_path;
      const { triggers } = (await (await fetch("/api/v1/triggers?project=full")).json()) as {
        triggers: { name: string; webhook_path: string }[];
      };
      const path = (name: string) => triggers.find((t) => t.name === name)!.webhook_path;
      const holding = (await (await fetch(path("hold"), { method: "POST" })).json()) as {
        session_id: string;
      };
      await until("the slot is taken", () => fake.started.length === 1);

      const keyed = { method: "POST", headers: { "Idempotency-Key": "k-1" }, body: "{}" };
      const push = githubDelivery("gh-k", "push", { ref: "main" }, { delivery: "d-1" });
      const refused = [await fetch(path("hook"), keyed), await fetch(inbound, push)];
      expect(refused.map((r) => [r.status, r.headers.get("retry-after")])).toEqual([
        [503, "1"],
        [503, "1"],
      ]);
      expect(await hook.stores.storage.getKeys("dedup")).toEqual([]);

      release();
      await hook.sessions.whenEnded(holding.session_id);
      // One at a time: the service has room for one session.
      const again = await fetch(path("hook"), keyed);
      expect([again.status, again.headers.get("idempotent-replayed")]).toEqual([202, null]);
      const { session_id } = (await again.json()) as { session_id: string };
      await hook.sessions.whenEnded(session_id);
      const pushed = await fetch(inbound, push);
      expect([pushed.status, pushed.headers.get("idempotent-replayed")]).toEqual([202, null]);
      expect(((await pushed.json()) as { session_ids: string[] }).session_ids).toHaveLength(1);
    });
  });
}
