import { describe, expect, it } from "vitest";
import { deployBody, targets } from "../../test/support/app.ts";
import { fakeRuntime } from "../../test/support/fake-runtime.ts";

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
    expect(html).toContain("EDGE!… [cut at 256 KiB]");
    expect(html).not.toContain("TAIL");
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
