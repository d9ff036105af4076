import { describe, expect, it } from "vitest";
import { watchForms } from "./google-pubsub.ts";

/** A fake Forms API: the status each renew answers; every call recorded. */
function formsApi(renewStatus: number) {
  const calls: string[] = [];
  const fetcher = (async (url: string, init: RequestInit) => {
    const path = new URL(url).pathname;
    calls.push(`${init.method} ${path}`);
    if (path.endsWith(":renew")) {
      const ok = renewStatus < 300;
      const body = ok
        ? { id: path.split("/").at(-1)!.replace(":renew", ""), expireTime: "2026-12-13T00:00:00Z" }
        : { error: { message: "no" } };
      return new Response(JSON.stringify(body), { status: renewStatus });
    }
    return new Response(JSON.stringify({ id: "new", expireTime: "2026-12-13T00:00:00Z" }));
  }) as typeof fetch;
  return { calls, caller: { api: "https://forms.test", token: "t", fetch: fetcher } };
}
const vars = (n: string) =>
  ({ FormID: "f1", FormSchemaWatchID: "ws", FormResponsesWatchID: "wr" })[n];

describe("watchForms: the form's two watches", () => {
  it("renews both saved watches, making none", async () => {
    const { calls, caller } = formsApi(200);
    const set = await watchForms(caller, vars, "projects/p/topics/forms");
    expect(set).toEqual({
      FormSchemaWatchID: "ws",
      FormResponsesWatchID: "wr",
      FormWatchesExpiration: "2026-12-13T00:00:00Z",
    });
    expect(calls).toEqual([
      "POST /v1/forms/f1/watches/ws:renew",
      "POST /v1/forms/f1/watches/wr:renew",
    ]);
  });

  it("makes a watch again only when Google no longer has it (404)", async () => {
    const gone = formsApi(404);
    const set = await watchForms(gone.caller, vars, "projects/p/topics/forms");
    expect(set.FormSchemaWatchID).toBe("new");
    expect(gone.calls).toContain("POST /v1/forms/f1/watches");
    const down = formsApi(503);
    await expect(watchForms(down.caller, vars, "projects/p/topics/forms")).rejects.toThrow(/503/);
    expect(down.calls).toEqual(["POST /v1/forms/f1/watches/ws:renew"]);
  });
});
