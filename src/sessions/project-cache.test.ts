import { describe, expect, it } from "vitest";
import type { ProjectDoc } from "../model/records.ts";
import { projectCache } from "./project-cache.ts";

/** A project store that counts its reads and serves whatever `doc` is now. */
function counted() {
  const store = { reads: 0, doc: { project: { id: "prj_1" }, vars: [] } as unknown as ProjectDoc };
  const projects = {
    get: async (id: string) => {
      store.reads++;
      return id === "prj_1" ? store.doc : null;
    },
  } as never;
  return { store, stores: { projects } };
}

describe("projectCache", () => {
  it("reads a project once while fresh, and again after a change or once it is old", async () => {
    const { store, stores } = counted();
    let now = 0;
    const projects = projectCache(stores, 5000, () => now);
    expect(await projects.get("prj_1")).toBe(store.doc);
    now = 4999;
    await projects.get("prj_1");
    expect(store.reads).toBe(1);
    store.doc = { ...store.doc, vars: [{ name: "COLOR" }] } as unknown as ProjectDoc;
    projects.forget("prj_1");
    expect(await projects.get("prj_1")).toBe(store.doc);
    expect(store.reads).toBe(2);
    now = 4999 + 5000;
    await projects.get("prj_1");
    expect(store.reads).toBe(3);
    expect(await projects.get("prj_nope")).toBeNull();
  });

  it("keeps nothing with no time to keep it (one instance)", async () => {
    const { store, stores } = counted();
    const projects = projectCache(stores, 0, () => 0);
    await projects.get("prj_1");
    await projects.get("prj_1");
    expect(store.reads).toBe(2);
  });
});
