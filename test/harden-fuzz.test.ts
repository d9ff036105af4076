import { randomBytes } from "node:crypto";
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { deploy } from "../src/deploy/index.ts";
import { HooklineError } from "../src/errors.ts";
import { compileFilter, FilterError } from "../src/events/filter.ts";
import { MAX_MACRO_ITEMS } from "../src/events/filter-bounds.ts";
import { keyedLock } from "../src/locks.ts";
import { ManifestError, parseManifest } from "../src/manifest/index.ts";
import { planDeploy } from "../src/manifest/plan.ts";
import type { Runtime } from "../src/runtime/runtime.ts";
import { createSecretBox } from "../src/secrets.ts";
import { createStorageFromUrl } from "../src/storage/driver.ts";
import { createStores } from "../src/storage/records.ts";
import { useEmulator } from "./support/emulator.ts";

/** Every line of a manifest error names the file and a line. */
const ISSUE_LINE = /^manifest\.yaml:\d+: /;

function parseOrIssue(text: string): "ok" | "refused" {
  try {
    parseManifest(text);
    return "ok";
  } catch (e) {
    if (!(e instanceof ManifestError)) throw e;
    for (const line of e.message.split("\n")) expect(line).toMatch(ISSUE_LINE);
    return "refused";
  }
}

const trigger = fc.record(
  {
    name: fc.oneof(fc.constantFrom("hook", "b-2", "_x"), fc.string({ maxLength: 8 })),
    type: fc.constantFrom("webhook", "schedule", 5),
    webhook: fc.constantFrom({}, null, 1, { a: 1 }),
    event_type: fc.constantFrom("post", "GET", "*", "", "bogus", 3),
    call: fc.constantFrom("handlers.py:on_hook", "../x.py:f", "handlers.py", "/abs.py:f", "h.py:g"),
    is_sync: fc.oneof(fc.boolean(), fc.constant("yes")),
    is_durable: fc.oneof(fc.boolean(), fc.constant(1)),
    filter: fc.constantFrom('data.method == "POST"', "1 +", "data.x", "event_type", "7", ""),
    dedup_header: fc.constantFrom("X-GitHub-Delivery", "bad header", 5, ""),
    connection: fc.constant("slack"),
  },
  { requiredKeys: ["name"] },
);
const variable = fc.record(
  {
    name: fc.constantFrom("GREETING", "PATH", "SVC_X", "1bad", "TOKEN"),
    value: fc.oneof(fc.string({ maxLength: 6 }), fc.integer(), fc.boolean(), fc.constant(null)),
    secret: fc.oneof(fc.boolean(), fc.constant("no")),
  },
  { requiredKeys: [] },
);
const lists = {
  triggers: fc.option(fc.array(trigger, { maxLength: 3 })),
  vars: fc.option(fc.array(variable, { maxLength: 3 })),
};
/** Manifest-shaped structures, valid and not, in both layouts, with stray keys and values. */
const manifestShape = fc.record(
  {
    version: fc.constantFrom("v1", "v2", "v3", 2),
    project: fc.oneof(
      fc.record({ name: fc.constantFrom("demo", "bad name", "") }),
      fc.record({ name: fc.constant("demo"), ...lists }, { requiredKeys: ["name"] }),
      fc.anything({ maxDepth: 2 }),
    ),
    ...lists,
    extra: fc.anything({ maxDepth: 2 }),
  },
  { requiredKeys: ["version", "project"] },
);

/** Mostly valid manifests, so that the applier (not only the parser) sees many of them. */
const validTrigger = fc.record(
  {
    name: fc.constantFrom("hook", "b-2", "_x", "orders"),
    type: fc.constant("webhook"),
    event_type: fc.constantFrom("post", "GET", "*", ""),
    call: fc.constantFrom("handlers.py:on_hook", "h.py:g"),
    is_durable: fc.boolean(),
    filter: fc.constantFrom('data.method == "POST"', "event_type == 'post'", ""),
    dedup_header: fc.constantFrom("X-GitHub-Delivery", "Webhook-Id", ""),
  },
  { requiredKeys: ["name", "type"] },
);
const validManifest = fc.record({
  version: fc.constantFrom("v1", "v2"),
  project: fc.constant({ name: "demo" }),
  triggers: fc.uniqueArray(validTrigger, { maxLength: 3, selector: (t) => t.name }),
  vars: fc.uniqueArray(
    fc.record({
      name: fc.constantFrom("GREETING", "TOKEN", "A_B"),
      value: fc.string({ maxLength: 6 }),
      secret: fc.boolean(),
    }),
    { maxLength: 3, selector: (v) => v.name },
  ),
});

const yamlish = fc.string({
  unit: fc.constantFrom(..."ab:- \n\t&*!|>{}[],#'\"%@`?0123456789vVtrue".split("")),
  maxLength: 120,
});

describe("fuzzing the manifest parser", () => {
  it("answers random text with a manifest or a manifest.yaml:<line> error, never a crash", () => {
    fc.assert(
      fc.property(fc.oneof(yamlish, fc.string({ maxLength: 200 })), (text) => {
        parseOrIssue(text);
      }),
      { numRuns: 1500 },
    );
  });

  it("answers random manifest structures the same way", () => {
    fc.assert(
      fc.property(manifestShape, (shape) => {
        let text: string;
        try {
          text = stringify(shape);
        } catch {
          return;
        }
        parseOrIssue(text);
      }),
      { numRuns: 400 },
    );
  });

  it("refuses a YAML alias bomb and an oversized file with a clear error", () => {
    const bomb = [
      "version: v2",
      'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]',
      ...Array.from({ length: 8 }, (_, i) => {
        const [p, n] = [String.fromCharCode(97 + i), String.fromCharCode(98 + i)];
        return `${n}: &${n} [*${p},*${p},*${p},*${p},*${p},*${p},*${p},*${p},*${p}]`;
      }),
      "project: {name: demo}",
    ].join("\n");
    expect(() => parseManifest(bomb)).toThrow(/^manifest\.yaml:1: invalid YAML: .*alias/i);
    const big = `version: v2\nproject: {name: demo}\n# ${"x".repeat(300 * 1024)}\n`;
    expect(() => parseManifest(big)).toThrow(
      /^manifest\.yaml:1: the manifest is larger than 256 KiB/,
    );
  });
});

describe("fuzzing the deploy planner and applier", () => {
  it("applies a random manifest whole or not at all, and a redeploy of it changes nothing", async () => {
    let deployed = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.oneof({ arbitrary: validManifest, weight: 3 }, { arbitrary: manifestShape, weight: 1 }),
        fc.boolean(),
        async (shape, buildFails) => {
          let text: string;
          try {
            text = stringify(shape);
          } catch {
            return;
          }
          const stores = createStores(createStorageFromUrl("memory:"));
          const runtime: Runtime = {
            check: async () => {
              if (buildFails)
                throw new HooklineError("unprocessable", "SyntaxError in handlers.py");
            },
            run: () => {
              throw new Error("no sessions here");
            },
            dispose: async () => {},
          };
          const secrets = createSecretBox(randomBytes(32));
          const ctx = { stores, runtime, secrets, locks: keyedLock(), changed: () => {} };
          const files = { "handlers.py": "ZGVmIG9uX2hvb2soZSk6IHBhc3MK", "h.py": "" };
          try {
            await deploy(ctx, { manifest: text, manifest_file: "manifest.yaml", files });
          } catch (e) {
            expect(e).toBeInstanceOf(HooklineError);
            expect(await stores.storage.getKeys()).toEqual([]);
            return;
          }
          expect(buildFails).toBe(false);
          deployed++;
          const doc = (await stores.projects.byName("demo"))!;
          const again = planDeploy(doc, parseManifest(text), (s) => secrets.open(s));
          expect(again.filter((c) => c.action !== "keep")).toEqual([]);
        },
      ),
      { numRuns: 250 },
    );
    // The generator must reach the applier, not only the parser's refusals.
    expect(deployed).toBeGreaterThan(10);
  });
});

/** CEL-ish expressions from a small grammar, plus the hostile shapes: nesting, growth, regexes. */
const celExpr = fc.letrec<{ e: string }>((tie) => ({
  e: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    fc.constantFrom(
      "data",
      "data.method",
      "data.body.json",
      "data.body.json.items",
      "data.body.text",
      'data.headers["X-Kind"]',
      "event_type",
      "x",
      "1",
      "2.5",
      '"a"',
      "true",
      "null",
      "[1, 2, 3]",
      '{"k": 1}',
      "b'by'",
    ),
    fc
      .tuple(
        tie("e"),
        fc.constantFrom("+", "-", "*", "/", "%", "==", "<", "&&", "||", "in"),
        tie("e"),
      )
      .map(([a, op, b]) => `(${a} ${op} ${b})`),
    tie("e").map((a) => `!${a}`),
    fc.tuple(tie("e"), tie("e"), tie("e")).map(([a, b, c]) => `(${a} ? ${b} : ${c})`),
    fc
      .tuple(tie("e"), fc.constantFrom("all", "exists", "exists_one", "map", "filter"), tie("e"))
      .map(([a, m, b]) => `${a}.${m}(x, ${b})`),
    fc
      .tuple(
        tie("e"),
        fc.constantFrom(
          ".size()",
          '.replace("a", "aaaaaaaaaaaaaaaa")',
          '.split("")',
          '.matches("(a+)+$")',
          '.startsWith("a")',
          ".lowerAscii()",
          '.join(",")',
          "[0]",
          '["k"]',
          ".k",
        ),
      )
      .map(([a, s]) => `${a}${s}`),
    tie("e").map((a) => `int(${a})`),
    tie("e").map((a) => `string(${a})`),
  ),
})).e;

const eventData = fc.record({
  method: fc.constantFrom("POST", "GET"),
  headers: fc.dictionary(fc.constantFrom("X-Kind", "Content-Type"), fc.string({ maxLength: 5 })),
  body: fc.record({
    text: fc.oneof(fc.string({ maxLength: 20 }), fc.constant(null), fc.constant("a".repeat(5000))),
    json: fc.oneof(
      fc.jsonValue({ maxDepth: 3 }),
      fc.record({ items: fc.array(fc.jsonValue({ maxDepth: 1 }), { maxLength: 5 }) }),
      fc.constant({ items: Array.from({ length: 5000 }, (_, i) => i) }),
    ),
  }),
});

describe("fuzzing CEL filters", () => {
  it("compiles or refuses (FilterError) random expressions; evaluation gives a bool, never a throw or hang", () => {
    let slowest = { ms: 0, expr: "", data: {} as unknown };
    let evaluated = 0;
    fc.assert(
      fc.property(fc.oneof(celExpr, fc.string({ maxLength: 40 })), eventData, (expr, data) => {
        let filter: ReturnType<typeof compileFilter>;
        try {
          filter = compileFilter(expr);
        } catch (e) {
          expect(e).toBeInstanceOf(FilterError);
          return;
        }
        const t0 = performance.now();
        expect(typeof filter.matches({ data, event_type: "post" })).toBe("boolean");
        const ms = performance.now() - t0;
        if (ms > slowest.ms) slowest = { ms, expr, data };
        evaluated++;
      }),
      { numRuns: 1500 },
    );
    // The slowest case, evaluated again and measured in this process's CPU time, not the wall
    // clock: other work on a shared machine does not add to it, while a hang or a quadratic
    // blow-up costs seconds of CPU, every time.
    const cpuMs = Math.min(
      ...[0, 1, 2].map(() => {
        const before = process.cpuUsage();
        compileFilter(slowest.expr).matches({ data: slowest.data, event_type: "post" });
        const used = process.cpuUsage(before);
        return (used.user + used.system) / 1000;
      }),
    );
    expect(cpuMs, slowest.expr).toBeLessThan(1000);
    expect(evaluated).toBeGreaterThan(300);
  });

  it("bounds what a filter costs on large data", () => {
    const items = Array.from({ length: 2 * MAX_MACRO_ITEMS }, (_, i) => i);
    const data = { body: { json: { items }, text: "a".repeat(1024 * 1024) } };
    const input = { data, event_type: "post" };
    // Past the loop budget: no match, at once.
    expect(compileFilter("data.body.json.items.map(x, x).size() > 0").matches(input)).toBe(false);
    // Growth by replace is capped.
    expect(compileFilter('data.body.text.replace("a", "aa").size() > 0').matches(input)).toBe(
      false,
    );
    // Nesting that would multiply sizes is refused when the filter is compiled.
    expect(() =>
      compileFilter("data.body.json.items.all(x, data.body.json.items.all(y, x == y))"),
    ).toThrow(/inside another must range over a part of the enclosing element/);
    expect(() => compileFilter(`data.method == "${"a".repeat(5000)}"`)).toThrow(/longer than 4096/);
    // What a real filter does still works: nesting over parts of each element.
    const push = { body: { json: { commits: [{ files: ["src/a"] }, { files: ["docs/b"] }] } } };
    expect(
      compileFilter(
        'data.body.json.commits.exists(c, c.files.exists(f, f.startsWith("docs/")))',
      ).matches({ data: push, event_type: "post" }),
    ).toBe(true);
  });
});

describe("hostile manifests over real HTTP", () => {
  const emu = useEmulator();
  let url: string;
  beforeAll(() => {
    url = `${emu.url}/api/v1/deploy`;
  });
  const deployText = (manifest: string) =>
    fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ manifest, manifest_file: "manifest.yaml", files: {} }),
    });

  it("refuses an alias bomb, an oversized manifest and a costly filter with problem+json naming the line", async () => {
    const bomb = [
      "version: v2",
      "project: {name: bomb}",
      'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]',
      ...Array.from({ length: 8 }, (_, i) => {
        const [p, n] = [String.fromCharCode(97 + i), String.fromCharCode(98 + i)];
        return `${n}: &${n} [*${p},*${p},*${p},*${p},*${p},*${p},*${p},*${p},*${p}]`;
      }),
    ].join("\n");
    const costly = [
      "version: v2",
      "project: {name: costly}",
      "triggers:",
      "  - name: t",
      "    type: webhook",
      "    filter: data.body.json.a.all(x, data.body.json.a.all(y, x == y))",
    ].join("\n");
    for (const [manifest, detail] of [
      [bomb, /^manifest\.yaml:1: invalid YAML: .*alias/i],
      [`version: v2\nproject: {name: big}\n# ${"x".repeat(300 * 1024)}\n`, /larger than 256 KiB/],
      [costly, /^manifest\.yaml:6: triggers\[0\]\.filter: invalid filter: a macro/],
    ] as const) {
      const res = await deployText(manifest);
      expect(res.status).toBeGreaterThanOrEqual(400);
      expect(res.status).toBeLessThan(500);
      expect(res.headers.get("content-type")).toBe("application/problem+json");
      expect(((await res.json()) as { detail: string }).detail).toMatch(detail);
    }
    const { projects } = await emu.api<{ projects: unknown[] }>("/projects");
    expect(projects).toEqual([]);
  });
});
