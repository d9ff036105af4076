import { describe, expect, it } from "vitest";
import type { HandlerEvent } from "../src/model/records.ts";
import { deployBody, targets } from "./support/app.ts";
import { fakeRuntime } from "./support/fake-runtime.ts";
import { githubDelivery } from "./support/signing.ts";
import { until } from "./support/until.ts";

/**
 * A connection's delivery through the one way in, over both targets: each trigger that takes an
 * event (one rule: event_type with AutoKitteh's aliases, then the filter) starts a session with
 * its own event record, and the subscribers of the connection hear the event once.
 */
const MANIFEST = `
version: v2
project:
  name: fan
  connections:
    - name: gh
      integration: github
      vars: [{name: webhook_secret, value: gh-k, secret: true}]
  triggers:
    - {name: on_push, connection: gh, event_type: push, call: "handlers.py:a", is_durable: false}
    - {name: on_any, connection: gh, call: "handlers.py:b", is_durable: false}
    - {name: on_main, connection: gh, event_type: push, filter: 'data.ref == "main"', call: "handlers.py:c", is_durable: false}
    - {name: no_call, connection: gh, event_type: push}
    - {name: listen, type: webhook, call: "handlers.py:listen", is_durable: false}
`;
const FILES = {
  "handlers.py":
    "def a(e):\n    pass\n\ndef b(e):\n    pass\n\ndef c(e):\n    pass\n\ndef listen(e):\n    pass\n",
};

for (const target of targets) {
  describe(`a connection's delivery (${target.name})`, () => {
    it("starts a session of each trigger that takes it, each its own event; subscribers hear it once", async () => {
      const heard: (HandlerEvent | null)[] = [];
      const fake = fakeRuntime({
        "handlers.py:a": () => {},
        "handlers.py:b": () => {},
        "handlers.py:c": () => {},
        "handlers.py:listen": async (_spec, wf) => {
          const id = await wf.subscribe("gh", "");
          wf.print("subscribed");
          heard.push(await wf.nextEvent([id], null));
          heard.push(await wf.nextEvent([id], 300));
        },
      });
      const { fetch, hook } = await target.make(fake.runtime);
      const deployed = await fetch("/api/v1/deploy", deployBody(MANIFEST, FILES));
      expect(deployed.status).toBe(200);
      const { connections } = (await deployed.json()) as {
        connections: { name: string; inbound_path: string }[];
      };
      const inbound = connections.find((c) => c.name === "gh")!.inbound_path;
      const { triggers } = (await (await fetch("/api/v1/triggers?project=fan")).json()) as {
        triggers: { name: string; webhook_path: string }[];
      };
      const listen = triggers.find((t) => t.name === "listen")!.webhook_path;
      const waiter = (
        (await (await fetch(listen, { method: "POST" })).json()) as {
          session_id: string;
        }
      ).session_id;
      await until("the listener subscribed", () =>
        hook.sessions.live(waiter)?.log.entries.some((e) => e.kind === "subscribe"),
      );

      const res = await fetch(inbound, githubDelivery("gh-k", "push", { ref: "dev" }));
      expect(res.status).toBe(202);
      const answer = (await res.json()) as { event_id: string; session_ids: string[] };
      expect(answer.session_ids).toHaveLength(2);
      const sessions = await Promise.all(
        answer.session_ids.map((id) => hook.sessions.whenEnded(id)),
      );
      expect(sessions.map((s) => [s?.trigger_name, s?.state])).toEqual([
        ["on_push", "completed"],
        ["on_any", "completed"],
      ]);
      const [first, second] = sessions.map((s) => s!.event_id);
      expect(first).toBe(answer.event_id);
      expect(second).not.toBe(first);
      for (const id of [first!, second!]) {
        expect(await hook.stores.events.get(id)).toMatchObject({
          connection: "gh",
          event_type: "push",
        });
      }
      await hook.sessions.whenEnded(waiter);
      expect(heard.map((e) => e?.event_id ?? null)).toEqual([answer.event_id, null]);
    });
  });
}
