import { afterAll, describe, expect, it } from "vitest";
import { newId } from "../ids.ts";
import { refusal } from "../sessions/python-errors.ts";
import { createStorageFromUrl } from "../storage/driver.ts";
import { createProjectKv } from "./project-kv.ts";
import { type SdkContext, handleSdkRequest as serve } from "./sdk-requests.ts";

/** The request's reply as the workflow gets it: its value, or the exception it raises. */
const handleSdkRequest = (kind: string, args: unknown, ctx: SdkContext) =>
  serve(kind, args, ctx).then((value) => ({ ok: true as const, value }), refusal);

describe("handleSdkRequest", () => {
  const storage = createStorageFromUrl("memory:");
  const store = createProjectKv({
    storage,
    limits: { maxValueBytes: 64 },
  });
  afterAll(() => store.dispose());
  const ctx = (): SdkContext => ({
    kv: store,
    projectId: newId("prj"),
    publicBaseUrl: "http://127.0.0.1:9980/",
  });
  // The messages exactly as the runner sends them (type, req and seq included).
  const msg = (op: string, key: string | undefined, args: unknown[], seq?: number) => ({
    type: "store",
    req: 3,
    ...(seq === undefined ? {} : { seq }),
    op,
    ...(key === undefined ? {} : { key }),
    args,
  });

  it("maps every store op to the store and answers with its value", async () => {
    const c = ctx();
    const ask = (op: string, key: string | undefined, ...args: unknown[]) =>
      handleSdkRequest("store", msg(op, key, args, 0), c);
    expect(await ask("get", "k")).toEqual({ ok: true, value: null });
    expect(await ask("set", "k", { a: [1, { $bytes: "eA==" }] })).toEqual({
      ok: true,
      value: null,
    });
    expect(await ask("get", "k")).toEqual({ ok: true, value: { a: [1, { $bytes: "eA==" }] } });
    expect(await ask("add", "n", { $int: "9007199254740993" })).toEqual({
      ok: true,
      value: { $int: "9007199254740993" },
    });
    expect(await ask("add", "n", -2)).toEqual({ ok: true, value: 9007199254740991 });
    expect(await ask("check_and_set", "n", 1, 2)).toEqual({ ok: true, value: false });
    expect(await ask("check_and_set", "n", 9007199254740991, 2)).toEqual({ ok: true, value: true });
    expect(await ask("list_keys", undefined)).toEqual({ ok: true, value: ["k", "n"] });
    expect(await ask("publish", "k")).toEqual({ ok: true, value: null });
    expect(await store.published(c.projectId, "k")).toEqual({ a: [1, { $bytes: "eA==" }] });
    expect(await ask("unpublish", "k")).toEqual({ ok: true, value: null });
    expect(await ask("del", "k")).toEqual({ ok: true, value: null });
    expect(await ask("public_url", undefined)).toEqual({
      ok: true,
      value: `http://127.0.0.1:9980/store/${c.projectId}`,
    });
  });

  it("refuses bad requests and what the store refuses with the Python error the workflow raises", async () => {
    const c = ctx();
    const cases: [unknown, string, string][] = [
      [msg("nope", "k", []), "ValueError", "store: op: Invalid type"],
      [msg("set", "k", []), "ValueError", "store: "],
      [msg("get", "", []), "ValueError", "store: key"],
      [
        msg("set", "k", ["x".repeat(100)]),
        "AutoKittehError",
        "over the limit of 64 bytes per value",
      ],
      [msg("add", "k", ["one"]), "TypeError", "must be a number"],
      [msg("publish", "absent", []), "ValueError", 'no value under "absent"'],
    ];
    for (const [request, error, fragment] of cases) {
      const reply = await handleSdkRequest("store", request, c);
      expect(reply).toMatchObject({ ok: false, error });
      expect(reply.ok ? "" : reply.message).toContain(fragment);
    }
    expect(await store.listKeys(c.projectId)).toEqual([]);
  });

  it("serves webhook_url from the project's triggers", async () => {
    const c = {
      ...ctx(),
      triggers: [
        { name: "hook", webhook_id: "a".repeat(26) },
        { name: "tick", webhook_id: "" }, // a schedule trigger: no URL reaches it
      ],
    };
    const msg = (trigger: unknown) => ({ type: "webhook_url", req: 1, trigger });
    expect(await handleSdkRequest("webhook_url", msg("hook"), c)).toEqual({
      ok: true,
      value: `http://127.0.0.1:9980/webhooks/${"a".repeat(26)}`,
    });
    expect(await handleSdkRequest("webhook_url", msg("nope"), c)).toEqual({
      ok: false,
      error: "ValueError",
      message: 'get_webhook_url: no trigger named "nope" in this project',
    });
    expect(await handleSdkRequest("webhook_url", msg("tick"), c)).toEqual({
      ok: false,
      error: "ValueError",
      message: 'get_webhook_url: trigger "tick" is not a webhook (it has no URL)',
    });
    expect(await handleSdkRequest("webhook_url", msg(5), c)).toMatchObject({
      ok: false,
      error: "ValueError",
    });
  });

  it("says which SDK requests the service does not serve yet", async () => {
    expect(await handleSdkRequest("signal", { session_id: "ses_x", name: "n" }, ctx())).toEqual({
      ok: false,
      error: "RuntimeError",
      message: "signal: not supported by this service yet",
    });
  });
});
