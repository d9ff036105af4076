import { describe, expect, it } from "vitest";
import { deployBody, type Fetch, targets } from "../../../test/support/app.ts";
import { fakeRuntime } from "../../../test/support/fake-runtime.ts";
import type { SessionRecord } from "../../model/records.ts";
import type { SessionSpec } from "../../runtime/runtime.ts";

/**
 * `POST /api/v1/projects/{project}/sessions`: a session started by hand, as AutoKitteh's
 * `ak session start` starts one. Its handler gets the inputs as `event.data`; a bad entry point
 * or body is refused as problem+json with nothing stored.
 */
const manifest = (version: string) => `version: ${version}
project:
  name: manual
`;
const FILES = {
  "program.py": "def on_manual_run(event):\n    pass\n\nasync def later(event):\n    pass\n",
  "lib/util.py": "def helper():\n    pass\n",
};

async function setup(version = "v1") {
  const seen: SessionSpec[] = [];
  const fake = fakeRuntime({
    "program.py:on_manual_run": (spec) => void seen.push(spec),
    "program.py:later": (spec) => void seen.push(spec),
  });
  const { hook, fetch } = await targets[0]!.make(fake.runtime);
  expect((await fetch("/api/v1/deploy", deployBody(manifest(version), FILES))).status).toBe(200);
  return { hook, fetch, seen };
}

const post = (fetch: Fetch, body: unknown, project = "manual") =>
  fetch(`/api/v1/projects/${project}/sessions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });

describe("a manual run", () => {
  it("starts the entry point with the inputs as event.data, marked as started by hand", async () => {
    const { hook, fetch, seen } = await setup();
    const inputs = { user: "ada", n: 3, tags: ["a", "b"], body: { bytes: "x" }, none: null };
    const res = await post(fetch, { entrypoint: "program.py:on_manual_run", inputs });
    expect(res.status).toBe(201);
    const { session } = (await res.json()) as { session: SessionRecord };
    expect(session).toMatchObject({
      trigger_id: "",
      trigger_name: "",
      entry: "program.py:on_manual_run",
      manual: true,
      durable: false,
      is_sync: false,
    });
    expect(session).not.toHaveProperty("pickle_values");
    expect((await hook.sessions.whenEnded(session.id))?.state).toBe("completed");
    expect(seen[0]!.event).toMatchObject({ event_type: "manual", data: inputs });
    expect(seen[0]!.event.data_encoding).toBe("json");
    const event = (await (await fetch(`/api/v1/events/${session.event_id}`)).json()) as {
      event: { data: unknown; event_type: string; trigger_id: string };
    };
    expect(event.event).toMatchObject({ event_type: "manual", data: inputs, trigger_id: "" });

    // Without inputs, event.data is {}; durable when asked.
    const more = await post(fetch, { entrypoint: "program.py:later", durable: true });
    const second = ((await more.json()) as { session: SessionRecord }).session;
    expect(second).toMatchObject({ durable: true, manual: true });
    await hook.sessions.whenEnded(second.id);
    expect(seen[1]!.event.data).toEqual({});

    // A re-run runs the same entry point with the same inputs, again by hand.
    const rerun = await fetch(`/api/v1/sessions/${session.id}/rerun`, { method: "POST" });
    expect(rerun.status).toBe(201);
    const third = ((await rerun.json()) as { session: SessionRecord }).session;
    expect(third).toMatchObject({ entry: "program.py:on_manual_run", manual: true });
    await hook.sessions.whenEnded(third.id);
    expect(seen[2]!.event.data).toEqual(inputs);
  });

  it("pickles activity values under version: v2, as that manifest's triggers do", async () => {
    const { fetch } = await setup("v2");
    const res = await post(fetch, { entrypoint: "program.py:on_manual_run" });
    expect(((await res.json()) as { session: SessionRecord }).session.pickle_values).toBe(true);
  });

  it("refuses a bad entry point, body or project with problem+json, storing nothing", async () => {
    const { hook, fetch, seen } = await setup();
    const stored = async () => (await hook.stores.storage.getKeys()).sort();
    const before = await stored();
    const cases: [unknown, number, string][] = [
      [
        { entrypoint: "program.py" },
        400,
        'entrypoint must be <file.py>:<function>, got "program.py"',
      ],
      [{ entrypoint: "nope.py:main" }, 400, "no file nope.py in this project's deployment"],
      [{ entrypoint: "program.py:main" }, 400, "program.py has no top-level function main"],
      [{ entrypoint: "lib/util.py:helper", inputs: "x" }, 400, "inputs"],
      [{ entrypoint: "program.py:later", inputs: { "": 1 } }, 400, "must not be empty"],
      [{ entrypoint: "program.py:later", inputs: [1, 2] }, 400, "must be a JSON object"],
      [{ entrypoint: "program.py:later", durable: "yes" }, 400, "durable"],
      ["{not json", 400, "JSON"],
    ];
    for (const [body, status, detail] of cases) {
      const res = await post(fetch, body);
      expect(res.status, JSON.stringify(body)).toBe(status);
      expect(res.headers.get("content-type")).toContain("application/problem+json");
      expect(((await res.json()) as { detail: string }).detail).toContain(detail);
    }
    const unknown = await post(fetch, { entrypoint: "program.py:later" }, "nope");
    expect(unknown.status).toBe(404);
    expect(await stored()).toEqual(before);
    expect(seen).toEqual([]);
  });
});
