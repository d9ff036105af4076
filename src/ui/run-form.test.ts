import { randomBytes } from "node:crypto";
import { createStorage } from "unstorage";
import memory from "unstorage/drivers/memory";
import { describe, expect, it } from "vitest";
import { deployBody } from "../../test/support/app.ts";
import { fakeRuntime } from "../../test/support/fake-runtime.ts";
import type { HandlerEvent } from "../model/records.ts";
import { composeApp } from "../platform/compose.ts";
import { createSecretBox } from "../secrets.ts";

/**
 * The project page of an AutoKitteh project: its display name, its vars' descriptions, and the
 * "Run" form that starts a session by hand (its files' top-level functions, inputs as JSON).
 */
const MANIFEST = `version: v1
project:
  name: walkthrough
  display_name: Send a <b>message</b>
  vars:
    - name: CHANNEL
      description: where the message goes, <i>not</i> HTML
      value: general
`;
const FILES = {
  "program.py": "def on_manual_run(event):\n    pass\n\nasync def other(event):\n    pass\n",
  "lib/helpers.py": "def helper(x):\n    return x\n",
  "acts.py":
    "import workflow_sdk\n\n@workflow_sdk.activity\ndef charge(event):\n    pass\n\ndef typed(payload: Event):\n    pass\n",
  "README.md": "def not_python():\n",
};
const ORIGIN = "http://localhost";

async function setup() {
  const seen: HandlerEvent[] = [];
  const fake = fakeRuntime({ "program.py:on_manual_run": (spec) => void seen.push(spec.event) });
  const hook = composeApp({
    services: {
      storage: createStorage({ driver: memory() }),
      runtime: fake.runtime,
      secrets: createSecretBox(randomBytes(32)),
    },
  });
  expect((await hook.app.request("/api/v1/deploy", deployBody(MANIFEST, FILES))).status).toBe(200);
  const doc = (await hook.stores.projects.byName("walkthrough"))!;
  const url = `/ui/projects/${doc.project.id}`;
  const page = await hook.app.request(url);
  const cookie = page.headers.get("set-cookie")!.split(";")[0]!;
  const html = await page.text();
  const csrf = /name="_csrf" value="([^"]+)"/.exec(html)![1]!;
  const run = (fields: Record<string, string>) =>
    hook.app.request(`${url}/run`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", cookie, origin: ORIGIN },
      body: new URLSearchParams({ _csrf: csrf, ...fields }).toString(),
    });
  return { hook, html, run, seen };
}

describe("the project page's Run form", () => {
  it("offers the entry points; helpers and activities apart; shows the display name and descriptions, escaped", async () => {
    const { html } = await setup();
    const options = [...html.matchAll(/<option value="([^"]+)"/g)].map((m) => m[1]);
    expect(options).toEqual(["acts.py:typed", "program.py:on_manual_run", "program.py:other"]);
    expect(html).toMatch(/id="helpers"[^>]*>Helpers: <code>lib\/helpers.py:helper<\/code>/);
    expect(html).toMatch(/id="activities"[^>]*>[^<]*: <code>acts.py:charge<\/code>/);
    expect(html).toContain('<optgroup label="program.py">');
    expect(html).toContain("Send a &lt;b&gt;message&lt;/b&gt;");
    expect(html).toContain("where the message goes, &lt;i&gt;not&lt;/i&gt; HTML");
  });

  it("starts the chosen function with the inputs as event.data and opens the session", async () => {
    const { hook, run, seen } = await setup();
    const res = await run({
      entrypoint: "program.py:on_manual_run",
      inputs: '{"to": "ada", "n": 2}',
      durable: "on",
    });
    expect(res.status).toBe(303);
    const id = res.headers.get("location")!.split("/").at(-1)!;
    const rec = await hook.sessions.whenEnded(id);
    expect(rec).toMatchObject({ manual: true, durable: true, state: "completed" });
    expect(seen[0]?.data).toEqual({ to: "ada", n: 2 });
    const page = await (await hook.app.request(`/ui/sessions/${id}`)).text();
    expect(page).toContain("(started by hand)");
    expect(page).toMatch(/id="event-inputs"[^>]*>[^<]*&quot;to&quot;: &quot;ada&quot;/);
    const list = await (await hook.app.request("/ui/sessions")).text();
    expect(list).toContain("<td>(started by hand)</td>");
  });

  it("refuses inputs that are not a JSON object and an unknown function on the page, starting nothing", async () => {
    const { hook, run } = await setup();
    const keys = async () => (await hook.stores.storage.getKeys()).sort();
    const before = await keys();
    const cases: [Record<string, string>, string][] = [
      [{ entrypoint: "program.py:on_manual_run", inputs: "{nope" }, "inputs: not JSON"],
      [
        { entrypoint: "program.py:on_manual_run", inputs: "[1, 2]" },
        "inputs: must be a JSON object",
      ],
      [
        { entrypoint: "program.py:gone", inputs: "{}" },
        "program.py has no top-level function gone",
      ],
    ];
    for (const [fields, message] of cases) {
      const res = await run(fields);
      expect(res.status, JSON.stringify(fields)).toBe(400);
      const html = await res.text();
      expect(/id="run-error"[^>]*>([^<]*)</.exec(html)?.[1]).toContain(message);
    }
    const forged = await run({ entrypoint: "program.py:on_manual_run", _csrf: "nope" });
    expect(forged.status).toBe(403);
    expect(await keys()).toEqual(before);
  });
});
