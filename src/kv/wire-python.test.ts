import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { newId } from "../ids.ts";
import { createStorageFromUrl } from "../storage/driver.ts";
import { createProjectKv } from "./project-kv.ts";

const runtimeDir = fileURLToPath(new URL("../../python-runtime", import.meta.url));

/** Runs Python with this checkout's workflow_sdk; stdin and stdout are JSON. */
function python(code: string, input: unknown): unknown {
  const out = execFileSync("python3", ["-c", code], {
    input: JSON.stringify(input),
    env: { ...process.env, PYTHONPATH: runtimeDir },
  });
  return JSON.parse(out.toString());
}

// Both sides of the wire form, for real: what Python encodes, the store adds and keeps, and
// Python decodes back to the same values and types.
describe("store values between Python and the store", () => {
  const store = createProjectKv({
    storage: createStorageFromUrl("memory:"),
  });
  afterAll(() => store.dispose());

  it("keeps Python's values and number types exact through add and set", async () => {
    const encoded = python(
      `import json, sys
from workflow_sdk.values import encode
print(json.dumps([encode(v) for v in [2**70, 1, 1.0, 0.25, (1, b"x"), {"n": -2**65, "s": {1, 2}}]]))`,
      null,
    ) as unknown[];
    const p = newId("prj");
    const sums = [];
    for (const [i, w] of encoded.entries()) {
      if (i < 4) sums.push(await store.add(p, `n${i}`, w), await store.add(p, `n${i}`, w));
      else await store.set(p, `v${i}`, w);
    }
    const kept = [await store.get(p, "v4"), await store.get(p, "v5")];
    const decoded = python(
      `import json, sys
from workflow_sdk.values import decode
sums, kept = json.load(sys.stdin)
out = [[repr(v), type(v).__name__] for v in map(decode, sums)]
out.append(decode(kept[0]) == (1, b"x") and decode(kept[1]) == {"n": -2**65, "s": {1, 2}})
print(json.dumps(out))`,
      [sums, kept],
    );
    expect(decoded).toEqual([
      [String(2n ** 70n), "int"],
      [String(2n ** 71n), "int"],
      ["1", "int"],
      ["2", "int"],
      ["1.0", "float"],
      ["2.0", "float"],
      ["0.25", "float"],
      ["0.5", "float"],
      true,
    ]);
  });
});
