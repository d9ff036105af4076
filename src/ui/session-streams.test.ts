import { describe, expect, it } from "vitest";
import { deployBody, targets } from "../../test/support/app.ts";
import { fakeRuntime } from "../../test/support/fake-runtime.ts";
import { until } from "../../test/support/until.ts";

/**
 * The session list filtered by trigger on every page and in its live stream, and one running
 * session's stream from a given entry: the web UI's routes over the real app and session core,
 * a fake runtime standing in for Python.
 */
const MANIFEST = `
version: v2
project:
  name: streams
triggers:
  - {name: a, type: webhook, call: handlers.py:quick}
  - {name: b, type: webhook, call: handlers.py:quick}
  - {name: slow, type: webhook, call: handlers.py:slow}
`;
const FILES = { "handlers.py": "def quick(event):\n    pass\n\ndef slow(event):\n    pass\n" };

/** Server-sent events as they arrive: `until` reads on until one matches. */
function sse(res: Response) {
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  const seen: { event: string; data: Record<string, string> }[] = [];
  let buffer = "";
  return {
    seen,
    async until(match: (e: { event: string; data: Record<string, string> }) => boolean) {
      for (;;) {
        const found = seen.find(match);
        if (found) return found;
        const { done, value } = await reader.read();
        if (done) throw new Error("the stream ended first");
        buffer += decoder.decode(value, { stream: true });
        for (let cut = buffer.indexOf("\n\n"); cut >= 0; cut = buffer.indexOf("\n\n")) {
          const lines = buffer.slice(0, cut).split("\n");
          buffer = buffer.slice(cut + 2);
          // A comment (": open") is kept as an event named "comment".
          const event = lines.find((l) => l.startsWith("event: "))?.slice(7) ?? "comment";
          const data = lines.find((l) => l.startsWith("data: "))?.slice(6);
          seen.push({ event, data: data ? JSON.parse(data) : {} });
        }
      }
    },
    close: () => reader.cancel(),
  };
}

async function setup() {
  let release = () => {};
  const gate = new Promise<void>((r) => {
    release = r;
  });
  const fake = fakeRuntime({
    "handlers.py:quick": () => {},
    "handlers.py:slow": async (_spec, wf) => {
      for (const text of ["one", "two", "three"]) wf.print(`${text}\n`);
      await gate;
      wf.print("four\n");
    },
  });
  const { hook } = await targets[0]!.make(fake.runtime);
  expect((await hook.app.request("/api/v1/deploy", deployBody(MANIFEST, FILES))).status).toBe(200);
  const doc = (await hook.stores.projects.byName("streams"))!;
  const path = (name: string) =>
    `/webhooks/${doc.triggers.find((t) => t.name === name)!.webhook_id}`;
  /** Starts a session of `trigger`; resolves with its id (at its end unless `running`). */
  const send = async (trigger: string, running = false) => {
    const r = await hook.app.request(path(trigger), { method: "POST", body: "{}" });
    const { session_id } = (await r.json()) as { session_id: string };
    if (!running) await hook.sessions.whenEnded(session_id);
    return session_id;
  };
  return { hook, send, release, project: doc.project.id };
}

const rowsOf = (html: string) => [...html.matchAll(/<tr id="row-(ses_\w+)"/g)].map((m) => m[1]);
const nextOf = (html: string) =>
  /<a rel="next" href="([^"]+)"/.exec(html)?.[1]?.replaceAll("&amp;", "&");

describe("the session list by trigger", () => {
  it("keeps the trigger filter on every page", async () => {
    const { hook, send, project } = await setup();
    const ids: Record<string, string[]> = { a: [], b: [] };
    for (let i = 0; i < 120; i++) {
      const trigger = i % 2 ? "b" : "a";
      ids[trigger]!.push(await send(trigger));
    }
    const pages: string[][] = [];
    let url: string | undefined = `/ui/sessions?project=${project}&trigger=a`;
    while (url) {
      const html = await (await hook.app.request(url)).text();
      pages.push(rowsOf(html) as string[]);
      url = nextOf(html);
      if (url) expect(url).toContain("trigger=a");
    }
    expect(
      pages.map((p) => p.length),
      "60 sessions of trigger a: a page of 50, then 10",
    ).toEqual([50, 10]);
    expect(pages.flat(), "trigger a's sessions only, newest first").toEqual([...ids.a!].reverse());
  });

  it("streams only the filtered trigger's sessions live", async () => {
    const { hook, send, project } = await setup();
    const res = await hook.app.request(`/ui/sessions/stream?project=${project}&trigger=a`);
    const stream = sse(res);
    await stream.until((e) => e.event === "comment"); // watching from here on
    const other = await send("b");
    const mine = await send("a");
    await stream.until(
      (e) => e.event === "row" && e.data.id === mine && /completed/.test(e.data.text!),
    );
    await stream.close();
    const rows = stream.seen.filter((e) => e.event === "row").map((e) => e.data.id);
    expect(rows.length).toBeGreaterThan(0);
    expect(new Set(rows)).toEqual(new Set([mine]));
    expect(rows).not.toContain(other);
  });
});

describe("a running session's stream", () => {
  it("starts at entry `from`, then follows the session to its end", async () => {
    const { hook, send, release } = await setup();
    const id = await send("slow", true);
    await until("the session's third print", () =>
      hook.sessions.live(id)?.log.entries.some((e) => e.kind === "print" && e.text === "three\n"),
    );
    const entries = hook.sessions.live(id)!.log.entries;
    const from = entries.findIndex((e) => e.kind === "print" && e.text === "two\n");
    expect(from).toBeGreaterThan(0);

    const stream = sse(await hook.app.request(`/ui/sessions/${id}/stream?from=${from}`));
    await stream.until((e) => e.event === "entry" && e.data.html!.includes("three"));
    const before = stream.seen.filter((e) => e.event === "entry").map((e) => e.data.html!);
    // Exactly the entries from `from` on: "two", then "three", and nothing logged before them.
    expect(before, `the entries from entry ${from} on, none before`).toHaveLength(
      entries.length - from,
    );
    expect(before[0]).toContain("two");
    expect(before.join("")).not.toContain("one");
    release();
    await stream.until((e) => e.event === "end");
    const after = stream.seen.filter((e) => e.event === "entry").map((e) => e.data.html!);
    expect(after.some((html) => html.includes("four"))).toBe(true);
    expect(after.filter((html) => html.includes("two"))).toHaveLength(1);
    await stream.close();
  });
});
