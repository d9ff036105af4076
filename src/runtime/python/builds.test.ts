import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { materializeBuild, safePath } from "./builds.ts";

const b64 = (s: string) => Buffer.from(s).toString("base64");

describe("builds", () => {
  let dataHome: string;
  beforeAll(async () => {
    dataHome = await mkdtemp(join(tmpdir(), "hl-builds-"));
  });
  afterAll(async () => {
    await rm(dataHome, { recursive: true, force: true });
  });

  it("writes a build once, atomically, and reuses it", async () => {
    const build = { id: "bld_a", files: { "h.py": b64("x = 1\n"), "lib/util.py": b64("y = 2\n") } };
    const [dir, same] = await Promise.all([
      materializeBuild(dataHome, build),
      materializeBuild(dataHome, build),
    ]);
    expect(dir).toBe(join(dataHome, "builds", "bld_a"));
    expect(same).toBe(dir);
    expect(await readFile(join(dir, "lib/util.py"), "utf8")).toBe("y = 2\n");
    expect(await readdir(join(dataHome, "builds"))).toEqual(["bld_a"]); // no temp dirs left
  });

  it.each([
    ["/etc/passwd", /is absolute/],
    ["../up.py", /"\.\."/],
    ["a/../../up.py", /"\.\."/],
    ["a\0b.py", /NUL/],
    ["a\\b.py", /backslash/],
    ["", /names no file/],
    ["dir/", /names no file/],
  ])("refuses the path %j", (path, why) => {
    expect(() => safePath(path)).toThrow(why);
  });

  it("normalises harmless paths", () => {
    expect(safePath("./a//b.py")).toBe("a/b.py");
  });

  it("refuses a build with a bad path or id and writes nothing", async () => {
    await expect(
      materializeBuild(dataHome, { id: "bld_b", files: { "../x.py": b64("") } }),
    ).rejects.toMatchObject({
      code: "bad_request",
    });
    await expect(materializeBuild(dataHome, { id: "../bld", files: {} })).rejects.toThrow(
      /bad build id/,
    );
    expect(await readdir(join(dataHome, "builds"))).toEqual(["bld_a"]);
  });
});
