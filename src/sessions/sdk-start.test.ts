import { describe, expect, it } from "vitest";
import type { ProjectDoc } from "../model/records.ts";
import { checkLoc } from "./entry-points.ts";
import { checkProject } from "./sdk-start.ts";

const b64 = (text: string) => Buffer.from(text).toString("base64");
const build = {
  id: "bld_1",
  files: {
    "jobs.py": b64(
      "import os\n\ndef run(event):\n    pass\n\nasync def later(e):\n    pass\n\n" +
        "class K:\n    def method(self):\n        pass\n",
    ),
    "pkg/mod.py": b64("def f(event): pass\n"),
  },
};
const doc = { project: { id: "prj_1", name: "demo" }, triggers: [] } as unknown as ProjectDoc;

describe("start() checks", () => {
  it("accepts top-level functions of files of the build", () => {
    for (const loc of ["jobs.py:run", "jobs.py:later", "pkg/mod.py:f", "./jobs.py:run"]) {
      expect(() => checkLoc(loc, build), loc).not.toThrow();
    }
  });

  it("refuses what the build cannot run, with ValueError's code", () => {
    const cases: [string, RegExp][] = [
      ["jobs.py", /loc must be <file.py>:<function>/],
      ["nope.py:run", /no file nope.py in this project's deployment/],
      ["jobs.py:missing", /jobs.py has no top-level function missing/],
      ["jobs.py:method", /jobs.py has no top-level function method/],
    ];
    for (const [loc, message] of cases) {
      expect(() => checkLoc(loc, build)).toThrow(message);
      try {
        checkLoc(loc, build);
      } catch (e) {
        expect((e as { code: string }).code).toBe("bad_request");
      }
    }
  });

  it("stays in its own project", () => {
    for (const p of ["", "demo", "prj_1"]) expect(() => checkProject(p, doc), p).not.toThrow();
    expect(() => checkProject("other", doc)).toThrow(/only in their own project \("demo"\)/);
  });
});
