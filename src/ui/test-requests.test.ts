import { describe, expect, it } from "vitest";
import { deployBody, targets } from "../../test/support/app.ts";
import { fakeRuntime } from "../../test/support/fake-runtime.ts";
import { createTestRequests } from "./test-requests.ts";

/**
 * A trigger page's test request whose answer is huge: the page shows its first 256 KiB and says
 * it cut there; the session keeps the whole answer. The real app and session core, the test
 * request through the service's own webhook route, a fake runtime standing in for Python.
 */
const MANIFEST = `
version: v2
project:
  name: big_answer
triggers:
  - {name: big, type: webhook, call: handlers.py:big, is_sync: true}
`;
const SHOWN = 256 * 1024;
/** What the page may show ends in "EDGE!"; "TAIL" starts just past it. */
const BODY = `${"x".repeat(SHOWN - 5)}EDGE!TAIL${"y".repeat(64 * 1024)}`;

describe("a trigger page's test request", () => {
  it("shows the first 256 KiB of a larger answer and says where it was cut", async () => {
    const fake = fakeRuntime({
      "handlers.py:big": (_spec, wf) =>
        wf.outcome({ status_code: 200, headers: {}, body: Buffer.from(BODY), more: false }),
    });
    const { hook } = await targets[0]!.make(fake.runtime);
    const files = { "handlers.py": "def big(event):\n    pass\n" };
    expect((await hook.app.request("/api/v1/deploy", deployBody(MANIFEST, files))).status).toBe(
      200,
    );
    const doc = (await hook.stores.projects.byName("big_answer"))!;
    const page = `/ui/projects/${doc.project.id}/triggers/big`;
    const form = await hook.app.request(page);
    const cookie = form.headers.get("set-cookie")!.split(";")[0]!;
    const csrf = /name="_csrf" value="([^"]+)"/.exec(await form.text())![1]!;
    const res = await hook.app.request(`${page}/test`, {
      method: "POST",
      headers: {
        "content-type": "application/x-www-form-urlencoded",
        cookie,
        origin: "http://localhost",
      },
      body: new URLSearchParams({ _csrf: csrf, method: "POST", body: "{}" }).toString(),
    });
    expect(res.status).toBe(200);
    const html = await res.text();
    const cut = "the page shows the answer's first 256 KiB, then says it was cut";
    expect(html.includes("EDGE!… [cut at 256 KiB]"), cut).toBe(true);
    expect(html.includes("TAIL"), cut).toBe(false);
    expect(html.length).toBeLessThan(SHOWN + 32 * 1024);
    // The session keeps the whole answer.
    const sessionId = /id="test-session" href="\/ui\/sessions\/(ses_\w+)"/.exec(html)![1]!;
    const ended = await hook.sessions.whenEnded(sessionId);
    expect(ended?.state).toBe("completed");
    const log = await hook.stores.logs.get(sessionId);
    const outcome = log.find((e) => e.kind === "outcome");
    expect(Buffer.from((outcome as { body: string }).body, "base64").toString()).toBe(BODY);
  });
});

/**
 * A body of `size` bytes of `byte`, made only as it is read, in chunks of `chunk` bytes: how
 * much was read (made), and whether the reader gave up on the rest.
 */
function lazyBody(size: number, chunk: number, byte = 0x7a) {
  const seen = { made: 0, cancelled: false };
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      const n = Math.min(chunk, size - seen.made);
      seen.made += n;
      controller.enqueue(new Uint8Array(n).fill(byte));
      if (seen.made >= size) controller.close();
    },
    cancel() {
      seen.cancelled = true;
    },
  });
  return { stream, seen };
}

describe("a test request's answer, read with a cap", () => {
  /** The real stores with `big_answer` deployed; the webhook route stood in for by `answer`. */
  async function sendWith(answer: () => Response) {
    const fake = fakeRuntime({ "handlers.py:big": () => {} });
    const { hook } = await targets[0]!.make(fake.runtime);
    const files = { "handlers.py": "def big(event):\n    pass\n" };
    await hook.app.request("/api/v1/deploy", deployBody(MANIFEST, files));
    const doc = (await hook.stores.projects.byName("big_answer"))!;
    const tests = createTestRequests(hook.stores, async () => answer());
    const req = { origin: "http://localhost", method: "POST", suffix: "", headers: [], body: "" };
    return tests.send(doc.project.id, "big", req);
  }

  it("stops reading a 50 MiB answer at 256 KiB and cancels the rest", async () => {
    const { stream, seen } = lazyBody(50 * 1024 * 1024, 64 * 1024);
    const res = await sendWith(() => new Response(stream, { status: 200 }));
    expect(res.status).toBe(200);
    expect(res.body === `${"z".repeat(SHOWN)}… [cut at 256 KiB]`, "256 KiB and the marker").toBe(
      true,
    );
    // Read up to the cap (and the chunk the stream keeps ready), then given up on.
    expect(seen.cancelled, "the rest of the answer cancelled").toBe(true);
    expect(seen.made, "bytes read of 50 MiB").toBeLessThan(SHOWN + 3 * 64 * 1024);
  });

  it("cuts a single huge chunk at 256 KiB, and only past it", async () => {
    const exact = await sendWith(() => new Response("é".repeat(SHOWN)));
    // 512 KiB of UTF-8, 256 Ki characters: whole.
    expect(exact.body === "é".repeat(SHOWN), "256 Ki characters shown whole").toBe(true);
    const over = await sendWith(() => new Response(`${"é".repeat(SHOWN)}!`));
    expect(
      over.body === `${"é".repeat(SHOWN)}… [cut at 256 KiB]`,
      "one character more: cut at 256 Ki characters, with the marker",
    ).toBe(true);
  });

  it("decodes characters split between chunks", async () => {
    const bytes = Buffer.from("ä€😀".repeat(1000));
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let i = 0; i < bytes.length; i += 5) controller.enqueue(bytes.subarray(i, i + 5));
        controller.close();
      },
    });
    expect((await sendWith(() => new Response(stream))).body).toBe("ä€😀".repeat(1000));
  });
});
