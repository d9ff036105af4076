import { describe, expect, it } from "vitest";
import type { BuildFiles } from "../model/records.ts";
import { functionKinds } from "./entry-points.ts";

const build = (files: Record<string, string>) =>
  ({
    files: Object.fromEntries(
      Object.entries(files).map(([k, v]) => [k, Buffer.from(v).toString("base64")]),
    ),
  }) as unknown as BuildFiles;

describe("functionKinds", () => {
  it("sorts top-level functions into entry points, activities and helpers", () => {
    const src = [
      "import autokitteh",
      "def on_hook(req):",
      "    pass",
      "def on_manual_run(event):",
      "    pass",
      "async def typed(x: workflow_sdk.Event, y=1):",
      "    pass",
      "@autokitteh.activity",
      "def fetch(event):",
      "    pass",
      "@activity(retry=None)",
      "def send(e):",
      "    pass",
      "def helper(text, n=2):",
      "    pass",
      "def noargs():",
      "    pass",
    ].join("\n");
    const kinds = functionKinds(build({ "program.py": src }), ["program.py:on_hook"]);
    expect(Object.fromEntries(kinds[0]!.functions.map((f) => [f.name, f.kind]))).toEqual({
      on_hook: "entry", // a trigger calls it, whatever its parameter is called
      on_manual_run: "entry",
      typed: "entry",
      fetch: "activity",
      send: "activity",
      helper: "helper",
      noargs: "helper",
    });
  });
});
