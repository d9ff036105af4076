import { describe, expect, it } from "vitest";
import { deployBody, targets } from "./support/app.ts";
import { fakeRuntime } from "./support/fake-runtime.ts";
import { until } from "./support/until.ts";

/**
 * Which sessions pickle their activity values (the spec's errors table, CONTRACT.md "Python
 * runtime"): every session of a `version: v2` manifest, durable or not, and the children they
 * start; under `version: v1` only durable ones. The service decides it and hands it to the
 * runtime (`pickleValues`); the golden cases see the Python side of one of them.
 */
const manifest = (version: "v1" | "v2", name: string) => `
version: ${version}
project:
  name: ${name}
  triggers:
    - name: plain
      type: webhook
      call: handlers.py:parent
      is_durable: false
    - name: kept
      type: webhook
      call: handlers.py:parent
      is_durable: true
`;
const FILES = { "handlers.py": "def parent(event):\n    pass\n\ndef child(event):\n    pass\n" };

describe("activity values pickled: version v2 in both modes, v1 when durable", () => {
  const fake = fakeRuntime({
    "handlers.py:parent": async (_spec, wf) => {
      await wf.sdk("start_session", { loc: "handlers.py:child", data: {}, memo: {}, project: "" });
    },
    "handlers.py:child": () => {},
  });

  it.each([
    ["v2", "plain", true],
    ["v2", "kept", true],
    ["v1", "plain", false],
    ["v1", "kept", true],
  ] as const)(
    "version %s, trigger %s (durable: kept): pickled %s, and in its child",
    async (version, trigger, pickled) => {
      const { fetch } = await targets[0]!.make(fake.runtime);
      const project = `p_${version}_${trigger}`;
      expect(
        (await fetch("/api/v1/deploy", deployBody(manifest(version, project), FILES))).status,
      ).toBe(200);
      const res = await fetch(`/api/v1/triggers?project=${project}`);
      const { triggers } = (await res.json()) as {
        triggers: { name: string; webhook_path: string }[];
      };
      const path = triggers.find((t) => t.name === trigger)!.webhook_path;
      const { session_id } = (await (await fetch(path, { method: "POST" })).json()) as {
        session_id: string;
      };
      const parent = await until("the parent's run", () =>
        fake.started.find((s) => s.sessionId === session_id),
      );
      const child = await until("the child's run", () =>
        fake.started.find(
          (s) => s.event.event_type === "start" && s.projectId === parent.projectId,
        ),
      );
      const rule = `a ${version} manifest's ${trigger === "kept" ? "durable" : "non-durable"} session`;
      expect(
        parent.pickleValues ?? parent.durable,
        `${rule} pickles its activity values: ${pickled}`,
      ).toBe(pickled);
      expect(
        child.pickleValues ?? child.durable,
        `the child of ${rule} pickles as its parent: ${pickled}`,
      ).toBe(pickled);
    },
  );
});
