import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { whereLines } from "./cli/config.ts";
import { resolveSettings } from "./config.ts";
import { createStorageFromUrl } from "./storage/driver.ts";
import { defaultStorageUrl, describeStorage, parseStorageUrl } from "./storage-url.ts";

describe("storage URLs", () => {
  it("parses every supported scheme", () => {
    expect(parseStorageUrl("memory:")).toEqual({ kind: "memory" });
    expect(parseStorageUrl("fs:/d/store")).toEqual({ kind: "fs", dir: "/d/store" });
    expect(parseStorageUrl("./data")).toEqual({ kind: "fs", dir: "./data" });
    expect(parseStorageUrl("lmdb:/d/db")).toEqual({ kind: "lmdb", dir: "/d/db", sync: "normal" });
    expect(parseStorageUrl("lmdb:/d/db?sync=meta")).toEqual({
      kind: "lmdb",
      dir: "/d/db",
      sync: "meta",
    });
    expect(parseStorageUrl("lmdb:/d/db?sync=full")).toEqual({
      kind: "lmdb",
      dir: "/d/db",
      sync: "full",
    });
    expect(parseStorageUrl("redis://127.0.0.1:6379")).toEqual({
      kind: "redis",
      url: "redis://127.0.0.1:6379",
    });
  });

  it("refuses other schemes with one line naming the supported ones", () => {
    for (const url of ["mysql://u@h/db", "foo:bar", "sqlite:x.db"]) {
      const err = (() => {
        try {
          parseStorageUrl(url);
        } catch (e) {
          return (e as Error).message;
        }
        return "";
      })();
      expect(err).toContain(`unsupported storage "${url}"`);
      expect(err).toContain("lmdb:<dir>");
      expect(err).toContain("postgres://…");
      expect(err.split("\n")).toHaveLength(1);
    }
    expect(() => parseStorageUrl("lmdb:/d?sync=none")).toThrow(
      /sync=normal \(default\), \?sync=meta or \?sync=full/,
    );
    expect(() => parseStorageUrl("lmdb:")).toThrow(/names no folder/);
    expect(() => resolveSettings({}, { SVC_STORAGE: "mysql://x" })).toThrow(/unsupported/);
    expect(parseStorageUrl("postgresql://u@h/db")).toEqual({
      kind: "postgres",
      url: "postgresql://u@h/db",
    });
  });
});

describe("an lmdb storage URL", () => {
  it("opens the folder it names, at the sync it names (normal unless told)", async () => {
    const dir = mkdtempSync(join(tmpdir(), "hookline-lmdburl-"));
    try {
      for (const [url, sync] of [
        [`lmdb:${join(dir, "a")}`, "normal"],
        [`lmdb:${join(dir, "b")}?sync=full`, "full"],
        [`lmdb:${join(dir, "c")}?sync=meta`, "meta"],
      ] as const) {
        const storage = createStorageFromUrl(url);
        expect((storage.getMount("").driver.options as { sync: string }).sync).toBe(sync);
        await storage.setItem("k", "v");
        await storage.dispose();
      }
      expect(existsSync(join(dir, "a", "data.mdb"))).toBe(true);
      expect(existsSync(join(dir, "b", "data.mdb"))).toBe(true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("the default engine of a data home", () => {
  let home = "";
  beforeEach(() => {
    home = mkdtempSync(join(tmpdir(), "hookline-engine-"));
  });
  afterEach(() => rmSync(home, { recursive: true, force: true }));

  it("is lmdb in a new data home, and the fs store in one written by the fs driver", () => {
    expect(defaultStorageUrl(home)).toBe(`lmdb:${join(home, "db")}`);
    expect(resolveSettings({ dataHome: home }, {}).storage).toBe(`lmdb:${join(home, "db")}`);
    mkdirSync(join(home, "store", "projects"), { recursive: true });
    expect(defaultStorageUrl(home)).toBe(`fs:${join(home, "store")}`);
    expect(describeStorage(defaultStorageUrl(home), home)).toMatchObject({
      engine: "fs",
      detected: true,
      text: `fs (detected existing data)  ${join(home, "store")}`,
    });
    // Chosen explicitly, the same store is not "detected".
    expect(describeStorage("fs:/elsewhere", home).detected).toBe(false);
    mkdirSync(join(home, "db"));
    writeFileSync(join(home, "db", "data.mdb"), "");
    expect(defaultStorageUrl(home)).toBe(`lmdb:${join(home, "db")}`);
  });

  it("is named by config where, with the file", () => {
    const env = { XDG_DATA_HOME: home };
    const line = (e: NodeJS.ProcessEnv) => whereLines(e).find((l) => l.startsWith("storage:"));
    expect(line(env)).toBe(
      `storage: lmdb (sync=normal)  ${join(home, "hookline", "db", "data.mdb")}  (SVC_STORAGE)`,
    );
    mkdirSync(join(home, "hookline", "store", "sessions"), { recursive: true });
    expect(line(env)).toContain("fs (detected existing data)");
    expect(line({ ...env, SVC_STORAGE: "redis://:pw@h:6379" })).toBe(
      "storage: redis  redis://:***@h:6379  (SVC_STORAGE)",
    );
    expect(line({ ...env, SVC_STORAGE: "foo:bar" })).toContain("unsupported");
  });
});
