import { Hono } from "hono";
import { afterAll, describe, expect, it } from "vitest";
import { HooklineError } from "../errors.ts";
import { newId } from "../ids.ts";
import { httpStatus, toProblem } from "../routes/problem.ts";
import { createStorageFromUrl } from "../storage/driver.ts";
import { createProjectKv } from "./project-kv.ts";
import { publicJson, storePublicRoutes } from "./public-routes.ts";
import { storePublicUrl } from "./sdk-requests.ts";

describe("published store values over HTTP", () => {
  const store = createProjectKv({
    storage: createStorageFromUrl("memory:"),
  });
  afterAll(() => store.dispose());
  // Mounted as the service mounts routes, with its onError shape.
  const app = new Hono();
  app.onError((err, c) => {
    const known = err instanceof HooklineError ? err : new HooklineError("internal", "internal");
    return c.json(toProblem(known), httpStatus(known.code) as 500, {
      "content-type": "application/problem+json",
    });
  });
  app.notFound(() => {
    throw new HooklineError("not_found", "no such route");
  });
  app.route("/store", storePublicRoutes(store));

  it("serves published values exactly, and nothing else", async () => {
    const p = newId("prj");
    await store.set(p, "stats/today", { n: { $int: "18446744073709551616" }, f: { $float: "2" } });
    await store.set(p, "hidden", "secret-ish");
    await store.publish(p, "stats/today");
    const base = new URL(storePublicUrl("http://h", p)).pathname;

    const one = await app.request(`${base}/stats/today`);
    expect(one.status).toBe(200);
    expect(one.headers.get("content-type")).toBe("application/json");
    expect(await one.text()).toBe('{"n":18446744073709551616,"f":2}');

    const all = await app.request(base);
    expect(await all.text()).toBe('{"stats/today":{"n":18446744073709551616,"f":2}}');

    for (const path of [`${base}/hidden`, `${base}/absent`, "/store/prj_nope/x"]) {
      const res = await app.request(path);
      expect(res.status).toBe(404);
      expect(res.headers.get("content-type")).toBe("application/problem+json");
      expect(await res.text()).not.toContain("secret-ish");
    }
    await store.unpublish(p, "stats/today");
    expect((await app.request(`${base}/stats/today`)).status).toBe(404);
  });

  it("renders the wire form as plain JSON", () => {
    expect(publicJson([{ $float: "nan" }, { $float: "0.5" }, { $bytes: "eA==" }, null])).toBe(
      '[null,0.5,{"$bytes":"eA=="},null]',
    );
  });
});
