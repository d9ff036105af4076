import { describe, expect, it } from "vitest";
import { targets } from "../../../test/support/app.ts";
import { fakeRuntime } from "../../../test/support/fake-runtime.ts";
import { sessionRecord } from "../../../test/support/records.ts";
import { newId } from "../../ids.ts";
import { TRIGGER_SCAN_BUDGET } from "./sessions.ts";

/**
 * `GET /sessions?trigger=` over more sessions than one answer looks at: the scan stops at
 * TRIGGER_SCAN_BUDGET, says there may be more, and a state filter (the index's own) narrows it.
 */
describe("the session list by trigger, past its scan budget", () => {
  it("stops at the budget with more and no total; a state filter reaches further", async () => {
    const { hook, fetch } = await targets[0]!.make(fakeRuntime({}).runtime);
    // The oldest session is the only one of its trigger, and the only one in error.
    const rare = sessionRecord({
      id: `ses_${"0".repeat(26)}`,
      trigger_name: "rare",
      state: "error",
    });
    await hook.stores.sessions.put(rare, null);
    const busy = Array.from({ length: TRIGGER_SCAN_BUDGET + 50 }, () =>
      sessionRecord({ id: newId("ses"), trigger_name: "busy" }),
    );
    for (let i = 0; i < busy.length; i += 500) {
      await Promise.all(busy.slice(i, i + 500).map((r) => hook.stores.sessions.put(r, null)));
    }
    const list = async (qs: string) =>
      (await (await fetch(`/api/v1/sessions?${qs}`)).json()) as {
        sessions: { id: string }[];
        more: boolean;
        total?: number;
        next?: string;
      };

    const stopped = await list("trigger=rare");
    expect(stopped).toEqual({ sessions: [], more: true, next: expect.any(String) });
    // Its next page goes on from where the scan stopped, and reaches the rare one.
    const further = await list(`trigger=rare&before=${stopped.next}`);
    expect(further).toMatchObject({ sessions: [{ id: rare.id }], more: false, total: 1 });
    const found = await list("trigger=rare&state=error");
    expect(found).toEqual({
      sessions: [expect.objectContaining({ id: rare.id })],
      more: false,
      total: 1,
    });
    const page = await list("trigger=busy&limit=3");
    expect(page.sessions).toHaveLength(3);
    expect(page).toMatchObject({ more: true });
    expect(page).not.toHaveProperty("total");
  }, 60_000);
});

/** `GET /sessions` with no filter: pages by cursor, nothing counted. */
describe("the session list's pages", () => {
  it("goes back by `next` without a gap or a repeat, and refuses a cursor that is no id", async () => {
    const { hook, fetch } = await targets[0]!.make(fakeRuntime({}).runtime);
    const ids = Array.from({ length: 5 }, (_, i) => `ses_${String(i).padStart(26, "0")}`);
    for (const id of ids) await hook.stores.sessions.put(sessionRecord({ id }), null);
    type Page = { sessions: { id: string }[]; more: boolean; total?: number; next?: string };
    const pages: Page[] = [];
    let qs = "limit=2";
    for (;;) {
      const page = (await (await fetch(`/api/v1/sessions?${qs}`)).json()) as Page;
      pages.push(page);
      if (!page.more || pages.length > 5) break;
      qs = `limit=2&before=${page.next}`;
    }
    expect(pages.flatMap((p) => p.sessions.map((s) => s.id))).toEqual([...ids].reverse());
    expect(pages.map((p) => [p.more, p.total, p.next])).toEqual([
      [true, undefined, ids[3]],
      [true, undefined, ids[1]],
      [false, 1, undefined],
    ]);
    const bad = await fetch("/api/v1/sessions?before=yesterday");
    expect(bad.status).toBe(400);
    expect(bad.headers.get("content-type")).toContain("application/problem+json");
    expect(((await bad.json()) as { detail: string }).detail).toContain(
      "before must be a session id",
    );
  });
});
