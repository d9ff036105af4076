import { execFileSync } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { repoRoot } from "./support/python.ts";

/**
 * The layers, from the bottom (mirrored in docs/architecture.md, "Layers"). A file may import
 * from its own layer and the layers below it, never from one above.
 */
const LAYERS: { rank: number; name: string; paths: string[] }[] = [
  { rank: 0, name: "model", paths: ["src/model/"] },
  {
    rank: 1,
    name: "base",
    paths: [
      "src/errors.ts",
      "src/clock.ts",
      "src/ids.ts",
      "src/log.ts",
      "src/paths.ts",
      "src/locks.ts",
      "src/secrets.ts",
      "src/config.ts",
      "src/package-root.ts",
      "src/storage-url.ts",
      // The API's wire shapes that the service and its clients (the CLI) share.
      "src/wire/",
    ],
  },
  // Facts about the outside services connections reach (which OAuth preset an integration
  // uses): below both the connections and the OAuth flow, which each read them.
  { rank: 1, name: "providers", paths: ["src/providers/"] },
  { rank: 2, name: "storage", paths: ["src/storage/"] },
  { rank: 2, name: "manifest", paths: ["src/manifest/"] },
  { rank: 2, name: "events", paths: ["src/events/"] },
  { rank: 2, name: "cluster", paths: ["src/cluster/"] },
  { rank: 2, name: "runtime", paths: ["src/runtime/"] },
  { rank: 2, name: "kv", paths: ["src/kv/"] },
  { rank: 2, name: "schedules", paths: ["src/schedules/"] },
  { rank: 2, name: "connections", paths: ["src/connections/"] },
  // OAuth connections: the flow, the presets, the refreshes; the routes serve it from above.
  { rank: 2, name: "oauth", paths: ["src/oauth/"] },
  // Metrics, traces and JSON logs: wraps the runtime and storage, told of sessions by the app.
  { rank: 2, name: "observe", paths: ["src/observe/"] },
  // The overview's session counters, kept in storage as sessions are created and end.
  { rank: 2, name: "stats", paths: ["src/stats/"] },
  { rank: 3, name: "sessions", paths: ["src/sessions/"] },
  { rank: 4, name: "deploy", paths: ["src/deploy/"] },
  { rank: 5, name: "routes", paths: ["src/routes/"] },
  { rank: 5, name: "ui", paths: ["src/ui/"] },
  { rank: 5, name: "app", paths: ["src/app.ts"] },
  { rank: 6, name: "platform", paths: ["src/platform/"] },
  { rank: 6, name: "front", paths: ["src/front/"] },
  { rank: 7, name: "emulator", paths: ["emulator/"] },
  // A client of the service (it speaks HTTP to it): outside the stack, see CLIENT.
  { rank: 7, name: "cli", paths: ["src/cli/"] },
];
/** What the CLI may import besides itself; only the emulator (its host) imports it. */
const CLIENT = { name: "cli", may: ["model", "base", "manifest"], importedBy: ["emulator"] };
/** No non-test source file is longer. */
const MAX_LINES = 300;
/** No options, deps, parts or handle type of a non-test source file has more top-level members. */
const MAX_MEMBERS = 8;
/** No function of a non-test source file has a longer body, in lines of code as Biome counts them. */
const MAX_FUNCTION_LINES = 60;

/**
 * The functions longer than MAX_FUNCTION_LINES, as `<file> <name>`: none now. A function that
 * grows past the limit fails; shorten it by design, not by reshaping code to meet the number.
 * A listed one that is within the limit fails too, so the list stays true.
 */
const LONG_FUNCTIONS = new Set<string>([]);

type Layer = (typeof LAYERS)[number];

function layerOf(file: string): Layer | undefined {
  return LAYERS.find((l) =>
    l.paths.some((p) => (p.endsWith("/") ? file.startsWith(p) : file === p)),
  );
}

/** Files under `dir` (relative to the repository) whose names pass `keep`. */
function filesUnder(dir: string, keep: (name: string) => boolean): string[] {
  return readdirSync(join(repoRoot, dir), { recursive: true, encoding: "utf8" })
    .filter((p) => keep(p) && !p.split("/").includes("__pycache__"))
    .map((p) => join(dir, p))
    .sort();
}

/** TypeScript sources, JSX included (the UI's views): never the tests beside them. */
const isSource = (p: string) => /\.tsx?$/.test(p) && !/\.test\.tsx?$/.test(p);
const sources = [...filesUnder("src", isSource), ...filesUnder("emulator", isSource)];

interface Import {
  from: string;
  /** The specifier as written; null for an import() of something else than a string literal. */
  spec: string | null;
}

/**
 * A file's text without its comments (JSDoc and block lines, a block comment within a line,
 * `//` to the end of a line), so an @example cannot count; strings stay, "/:id/*" included.
 */
function withoutComments(file: string): string {
  return readFileSync(join(repoRoot, file), "utf8")
    .split("\n")
    .filter((line) => !/^\s*(\/\*|\*)/.test(line))
    .map((line) => line.replace(/\/\*.*?\*\//g, "").replace(/(^|\s)\/\/.*$/, "$1"))
    .join("\n");
}

/**
 * Every import of a TypeScript file: static, `export … from`, side-effect, `import()` and
 * `import("…").T` types, comments dropped first.
 */
function importsOf(file: string): Import[] {
  const text = withoutComments(file);
  const specs = [
    ...text.matchAll(/^\s*(?:import|export)\s[^;]*?\bfrom\s*["']([^"']+)["']/gm),
    ...text.matchAll(/^\s*import\s*["']([^"']+)["']/gm),
    ...text.matchAll(/\bimport\(\s*["']([^"']+)["']\s*\)/g),
  ].map((m): Import => ({ from: file, spec: m[1]! }));
  const computed = [...text.matchAll(/\bimport\(\s*(?!["'][^"']+["']\s*\))/g)];
  return [...specs, ...computed.map((): Import => ({ from: file, spec: null }))];
}

interface Edge {
  /** The imported file; null when the specifier is computed. */
  target: string | null;
  spec: string;
}

/** Our own modules a file imports, as repository paths (packages and node: are not ours). */
function ownImports(file: string): Edge[] {
  return importsOf(file).flatMap(({ spec }): Edge[] => {
    if (spec === null) return [{ target: null, spec: "import(<computed>)" }];
    if (!spec.startsWith(".")) return [];
    return [{ target: relative(repoRoot, join(repoRoot, dirname(file), spec)), spec }];
  });
}

const edges = sources.flatMap((file) =>
  ownImports(file).map(({ target, spec }) => ({ file, target, spec })),
);

describe("layers", () => {
  it("finds the imports it checks", () => {
    // A parser that silently found nothing would pass every rule below.
    expect(sources.length).toBeGreaterThan(50);
    expect(edges.length).toBeGreaterThan(150);
    expect(edges).toContainEqual({
      file: "src/platform/compose.ts",
      target: "src/app.ts",
      spec: "../app.ts",
    });
    expect(edges).toContainEqual({
      file: "src/ui/routes.tsx",
      target: "src/ui/views/layout.tsx",
      spec: "./views/layout.tsx",
    });
    expect(edges).toContainEqual({
      file: "src/cli/main.ts",
      target: "src/cli/deploy.ts",
      spec: "./deploy.ts",
    });
  });

  it("puts every source file in a layer", () => {
    expect(sources.filter((f) => !layerOf(f))).toEqual([]);
  });

  it("has no import it cannot read, nor one that leaves src/ and emulator/", () => {
    const bad = edges.filter(
      ({ target }) =>
        target === null || !(target.startsWith("src/") || target.startsWith("emulator/")),
    );
    expect(bad.map(({ file, spec }) => `${file} imports ${spec}`)).toEqual([]);
  });

  it("has no upward import", () => {
    const upward = edges.flatMap(({ file, target, spec }) => {
      const from = layerOf(file);
      const to = target ? layerOf(target) : undefined;
      if (!from || !to || from === to || from.name === CLIENT.name) return [];
      if (to.name === CLIENT.name) {
        return CLIENT.importedBy.includes(from.name)
          ? []
          : [
              `${file} (${from.name}) imports ${spec} (${to.name}): only the emulator hosts the cli`,
            ];
      }
      return to.rank > from.rank
        ? [`${file} (${from.name}, ${from.rank}) imports ${spec} (${to.name}, ${to.rank})`]
        : [];
    });
    expect(upward).toEqual([]);
  });

  it("keeps the cli a client: it imports model, base and manifest only", () => {
    const outside = edges.flatMap(({ file, target, spec }) => {
      const from = layerOf(file);
      const to = target ? layerOf(target) : undefined;
      if (from?.name !== CLIENT.name || !to || to === from || CLIENT.may.includes(to.name)) {
        return [];
      }
      return [`${file} imports ${spec} (${to.name})`];
    });
    expect(outside).toEqual([]);
  });

  it("is the table docs/architecture.md shows", () => {
    const doc = readFileSync(join(repoRoot, "docs/architecture.md"), "utf8");
    const section = doc.split(/^## /m).find((s) => s.startsWith("Layers\n"));
    expect(section, 'docs/architecture.md has no "## Layers" section').toBeDefined();
    const row = (rank: number | string, l: Layer) =>
      `| ${rank} | ${l.name} | ${l.paths.map((p) => `\`${p}\``).join(" ")} |`;
    // The doc shows the stack top first, the client last.
    const expected = [
      ...LAYERS.filter((l) => l.name !== CLIENT.name)
        .map((l) => row(l.rank, l))
        .reverse(),
      row("client", LAYERS.find((l) => l.name === CLIENT.name)!),
    ];
    expect(section!.split("\n").filter((l) => /^\| (\d|client) /.test(l))).toEqual(expected);
    const may = `${CLIENT.may.slice(0, -1).join(", ")} and ${CLIENT.may.at(-1)}`;
    expect(section).toContain(`imports ${may} only`);
  });
});

describe("file size", () => {
  const isPython = (p: string) => p.endsWith(".py") && !/(^|\/)test_[^/]*\.py$/.test(p);
  const files = [...sources, ...filesUnder("python-runtime/workflow_sdk", isPython)];

  it(`keeps every non-test source file within ${MAX_LINES} lines`, () => {
    expect(files.length).toBeGreaterThan(60);
    const long = files.flatMap((file) => {
      const lines = readFileSync(join(repoRoot, file), "utf8").replace(/\n$/, "").split("\n");
      return lines.length > MAX_LINES ? [`${file}: ${lines.length} lines`] : [];
    });
    expect(long).toEqual([]);
  });
});

/** The name a function is known by, from the line it starts on: `<line N>` when it has none. */
function functionName(line: string, at: number): string {
  const m =
    /\bfunction\s*\*?\s*([\w$]+)/.exec(line) ??
    /\b(?:const|let|var)\s+([\w$]+)\s*=/.exec(line) ??
    /^\s*(?:(?:public|private|protected|static|async|get|set)\s+)*(#?[\w$]+)\s*[(<]/.exec(line) ??
    /^\s*(#?[\w$]+)\s*:/.exec(line);
  return m?.[1] ?? `<line ${at}>`;
}

/**
 * Function bodies longer than MAX_FUNCTION_LINES in src/ and emulator/ (TS and TSX), measured by
 * Biome's own parser (its noExcessiveLinesPerFunction rule, blank lines counted, comments not),
 * as `<file> <name>` → lines. Tests are exempt: `*.test.ts(x)`, and the shared suites that
 * import vitest (src/runtime/contract.ts). `root` is the repository by default; the self-check
 * points it at a fixture tree, so it proves the reporter works whatever the source looks like.
 */
function longFunctions(root = repoRoot): Map<string, number> {
  const dir = mkdtempSync(join(tmpdir(), "hookline-fnlen-"));
  try {
    const rule = { level: "error", options: { maxLines: MAX_FUNCTION_LINES } };
    writeFileSync(
      join(dir, "biome.json"),
      JSON.stringify({
        linter: {
          enabled: true,
          rules: { preset: "none", complexity: { noExcessiveLinesPerFunction: rule } },
        },
      }),
    );
    const args = ["lint", `--config-path=${dir}`, "--reporter=json", "--max-diagnostics=none"];
    let out: string;
    try {
      const dirs = ["src", "emulator"].filter((d) => existsSync(join(root, d)));
      out = execFileSync(join(repoRoot, "node_modules/.bin/biome"), [...args, ...dirs], {
        cwd: root,
        encoding: "utf8",
        stdio: ["ignore", "pipe", "ignore"],
      });
    } catch (e) {
      out = (e as { stdout: string }).stdout; // exit 1: it found some
    }
    const found = new Map<string, number>();
    const report = JSON.parse(out) as {
      diagnostics: { category: string; message: string; location: LintLocation }[];
    };
    for (const d of report.diagnostics) {
      if (!d.category.endsWith("/noExcessiveLinesPerFunction")) continue;
      const file = d.location.path;
      const text = readFileSync(join(root, file), "utf8");
      if (/\.test\.tsx?$/.test(file) || /^import .* from "vitest";$/m.test(text)) continue;
      const at = d.location.start.line;
      const name = functionName(text.split("\n")[at - 1] ?? "", at);
      found.set(`${file} ${name}`, Number(/\((\d+)\)/.exec(d.message)?.[1]));
    }
    return found;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

interface LintLocation {
  path: string;
  start: { line: number };
}

describe("function length", () => {
  const found = longFunctions();

  it("finds the long functions it checks", () => {
    // A reporter that silently found nothing would pass both rules below: run it over a fixture
    // tree with one function of 150 statements and one short one, parsed the same way.
    const fixture = mkdtempSync(join(tmpdir(), "hookline-fnlen-fixture-"));
    try {
      mkdirSync(join(fixture, "src"));
      const body = Array.from({ length: 150 }, (_, i) => `  total += ${i};`).join("\n");
      writeFileSync(
        join(fixture, "src", "long.ts"),
        `export function longOne(): number {\n  let total = 0;\n${body}\n  return total;\n}\n` +
          "export function shortOne(): number {\n  return 1;\n}\n",
      );
      const seen = longFunctions(fixture);
      expect(seen.get("src/long.ts longOne")).toBeGreaterThan(150);
      expect([...seen.keys()]).toEqual(["src/long.ts longOne"]);
    } finally {
      rmSync(fixture, { recursive: true, force: true });
    }
  });

  it(`keeps every function body within ${MAX_FUNCTION_LINES} lines, but the listed ones`, () => {
    const grown = [...found].filter(([key]) => !LONG_FUNCTIONS.has(key));
    expect(grown.map(([key, n]) => `${key}: ${n} lines`)).toEqual([]);
  });

  it("lists only functions still over the limit (the list only shrinks)", () => {
    const within = [...LONG_FUNCTIONS].filter((key) => !found.has(key));
    expect(within.map((key) => `${key}: within ${MAX_FUNCTION_LINES} lines, unlist it`)).toEqual(
      [],
    );
  });
});

/**
 * The object types named `…Options`, `…Deps`, `…Parts` or `…Handle` (an `interface`, or a
 * `type` that is an object literal, exported or not) in `code` (comments dropped), each with its
 * number of top-level members. Nested `{…}`, `(…)` and `[…]` are skipped, so a member whose type
 * is an object or a function counts once.
 */
function bagsOf(code: string): { name: string; members: number }[] {
  const named = "(\\w+(?:Options|Deps|Parts|Handle))\\b";
  const head = new RegExp(
    `^\\s*(?:export\\s+)?(?:interface\\s+${named}[^{=]*\\{|type\\s+${named}[^=]*=\\s*\\{)`,
    "gm",
  );
  return [...code.matchAll(head)].map((m) => {
    let depth = 0;
    let top = "";
    for (const c of code.slice(m.index + m[0].length)) {
      if ("})]".includes(c) && depth === 0) break; // the type's own closing brace
      if ("{([".includes(c)) depth++;
      else if ("})]".includes(c)) depth--;
      else if (depth === 0) top += c;
    }
    const member = /^\s*(?:readonly\s+)?(?:#?[\w$]+\??\s*(?:<[^>]*>)?\s*[:(]|\[)/;
    const members = top.split(/[;\n]/).filter((line) => member.test(line)).length;
    return { name: (m[1] ?? m[2])!, members };
  });
}

describe("options, deps, parts and handles", () => {
  const bags = sources.flatMap((file) =>
    bagsOf(withoutComments(file)).map((b) => ({ file, ...b })),
  );

  it("finds the types it checks", () => {
    // A parser that silently found nothing, or counted nothing, would pass the rule below.
    expect(bags.length).toBeGreaterThan(30);
    expect(bags).toContainEqual({ file: "src/sessions/core.ts", name: "SessionDeps", members: 8 });
    const fixture = "interface ADeps {\n  a: { x: 1; y: 2 };\n  b?(n: number): void;\n}";
    expect(bagsOf(`${fixture}\nexport type BParts = { c: string; d: () => void };`)).toEqual([
      { name: "ADeps", members: 2 },
      { name: "BParts", members: 2 },
    ]);
  });

  it(`keeps every one within ${MAX_MEMBERS} top-level members: group them by meaning`, () => {
    const big = bags.filter((b) => b.members > MAX_MEMBERS);
    expect(big.map((b) => `${b.file} ${b.name}: ${b.members} members`)).toEqual([]);
  });
});
