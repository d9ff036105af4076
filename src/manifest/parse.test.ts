import { describe, expect, expectTypeOf, it } from "vitest";
import { issuesOf, lines } from "../../test/support/manifest.ts";
import type { RetryPolicy } from "../model/records.ts";
import { httpStatus, toProblem } from "../routes/problem.ts";
import { type ManifestError, parseManifest, type TriggerSpec } from "./index.ts";

describe("parseManifest: good manifests", () => {
  it("reads the spec layout (v2) and fills defaults", () => {
    const m = parseManifest(
      lines(
        "version: v2",
        "project:",
        "  name: demo",
        "triggers:",
        "  - name: hook",
        "    type: webhook",
        "    event_type: POST",
        "    call: ./handlers/main.py:on_event",
        "    is_sync: true",
        '    filter: data.url.path.endsWith("/done")',
        "  - name: inbox",
        "    webhook: {}",
        "vars:",
        "  - name: GREETING",
        "    value: hello",
        "  - name: TOKEN",
        '    value: ""',
        "    secret: true",
      ),
    );
    expect(m).toEqual({
      version: "v2",
      project: { name: "demo", display_name: "" },
      triggers: [
        {
          name: "hook",
          type: "webhook",
          event_type: "post",
          call: "handlers/main.py:on_event",
          is_sync: true,
          is_durable: false,
          reuse_process: false,
          filter: 'data.url.path.endsWith("/done")',
          schedule: null,
          timezone: null,
          connection: null,
          dedup_header: "",
          retry: null,
        },
        {
          name: "inbox",
          type: "webhook",
          event_type: "",
          call: null,
          is_sync: false,
          is_durable: false,
          reuse_process: false,
          filter: "",
          schedule: null,
          timezone: null,
          connection: null,
          dedup_header: "",
          retry: null,
        },
      ],
      vars: [
        { name: "GREETING", value: "hello", secret: false, description: "" },
        { name: "TOKEN", value: "", secret: true, description: "" },
      ],
      connections: [],
    });
  });

  it("reads the AutoKitteh layout (v1): lists under project, durable by default", () => {
    const m = parseManifest(
      lines(
        "version: v1",
        "project:",
        "  name: my-project_1",
        "  triggers:",
        "    - name: get_it",
        "      webhook:",
        '      event_type: "*"',
        "      call: program.py:on_get",
        "    - name: explicit",
        "      type: webhook",
        "      call: a/b.py:f",
        "      is_durable: false",
        "  vars:",
        "    - name: URL",
        "      value: https://example.com",
      ),
    );
    expect(m.version).toBe("v1");
    expect(m.project).toEqual({ name: "my-project_1", display_name: "" });
    expect(m.triggers.map((t) => [t.name, t.event_type, t.call, t.is_durable])).toEqual([
      ["get_it", "", "program.py:on_get", true],
      ["explicit", "", "a/b.py:f", false],
    ]);
    expect(m.vars).toEqual([
      { name: "URL", value: "https://example.com", secret: false, description: "" },
    ]);
  });

  it("takes absent or empty lists as no triggers and no vars", () => {
    expect(parseManifest("version: v2\nproject: {name: p}\n")).toEqual({
      version: "v2",
      project: { name: "p", display_name: "" },
      triggers: [],
      vars: [],
      connections: [],
    });
    const m = parseManifest("version: v2\nproject:\n  name: p\ntriggers:\nvars: []\n");
    expect([m.triggers, m.vars]).toEqual([[], []]);
  });

  it("accepts every HTTP method in any case", () => {
    for (const method of ["get", "POST", "Put", "patch", "DELETE", "head", "options", ""]) {
      const m = parseManifest(
        lines(
          "version: v2",
          "project: {name: p}",
          "triggers:",
          `  - {name: t, type: webhook, event_type: "${method}"}`,
        ),
      );
      expect(m.triggers[0]!.event_type).toBe(method.toLowerCase());
    }
  });

  it("exports the normalized trigger type", () => {
    expectTypeOf<TriggerSpec>().toEqualTypeOf<{
      name: string;
      type: "webhook" | "schedule" | "connection";
      event_type: string;
      call: string | null;
      is_sync: boolean;
      is_durable: boolean;
      reuse_process: boolean;
      filter: string;
      schedule: string | null;
      timezone: string | null;
      connection: string | null;
      dedup_header: string;
      retry: RetryPolicy | null;
    }>();
  });
});

describe("parseManifest: errors", () => {
  it("formats the message as file:line: path: message, one issue a line", () => {
    const text = lines(
      "version: v2",
      "project:",
      "  name: demo",
      "triggers:",
      "  - name: hook",
      "    type: webhook",
      "    is_sync: yes",
    );
    expect(() => parseManifest(text)).toThrow(
      "manifest.yaml:7: triggers[0].is_sync: expected boolean",
    );
    expect(() => parseManifest(text, "x/autokitteh.yaml")).toThrow(
      /^x\/autokitteh\.yaml:7: triggers\[0\]\.is_sync: expected boolean$/,
    );
  });

  it("is a HooklineError the API can answer with", () => {
    try {
      parseManifest("");
    } catch (e) {
      expect(httpStatus((e as ManifestError).code)).toBe(400);
      expect(toProblem(e as ManifestError)).toMatchObject({
        detail: "manifest.yaml:1: the manifest is empty",
        issues: [{ line: 1, path: "", message: "the manifest is empty" }],
      });
    }
  });

  it("refuses an empty file and a root that is not a mapping at line 1", () => {
    expect(issuesOf("")).toEqual(["1 : the manifest is empty"]);
    expect(issuesOf("# nothing here\n")).toEqual(["1 : the manifest is empty"]);
    expect(issuesOf("\n\n- a\n")).toEqual([
      "1 : expected a mapping with version, project, triggers, vars",
    ]);
  });

  it("reports a YAML syntax error with its line", () => {
    expect(issuesOf("version: v2\nproject:\n  name: demo\n name: x\n")).toEqual([
      "4 : invalid YAML: All mapping items must start at the same column",
    ]);
    expect(issuesOf("version: v2\nversion: v1\n")).toEqual([
      "2 : invalid YAML: Map keys must be unique",
    ]);
  });

  it("checks version and project", () => {
    expect(issuesOf("version: 2\nproject:\n  name: 9demo\n")).toEqual([
      '1 version: expected "v1" or "v2"',
      '3 project.name: "9demo" is not a valid name: use letters, digits, "_" and "-" (at most 63), starting with a letter or "_"',
    ]);
    expect(issuesOf("# a comment\nproject: {name: p}\n")).toEqual(["2 version: required"]);
    expect(issuesOf("version: v2\nproject:\n")).toEqual(["2 project: expected mapping"]);
    expect(issuesOf(`version: v2\nproject:\n  name: ${"a".repeat(64)}\n`)[0]).toMatch(
      /^3 project\.name: "a+" is not a valid name/,
    );
  });

  it("points a missing required key at its parent mapping", () => {
    expect(issuesOf(lines("version: v2", "project:", "  triggers: []", "  vars: []"))).toEqual([
      "3 project.name: required",
    ]);
    expect(
      issuesOf(
        lines(
          "version: v2",
          "project: {name: p}",
          "triggers:",
          "  - type: webhook",
          "    call: a.py:f",
        ),
      ),
    ).toEqual(["4 triggers[0].name: required"]);
  });

  it("refuses unknown keys anywhere, at the key's line", () => {
    expect(
      issuesOf(
        lines(
          "version: v2",
          "owner: me",
          "project:",
          "  name: p",
          "  color: red",
          "triggers:",
          "  - name: t",
          "    type: webhook",
          "    retries:",
          "      max: 3",
          "vars:",
          "  - name: A",
          "    value: b",
          "    about: x",
        ),
      ),
    ).toEqual([
      "2 owner: unknown key (expected one of: version, project, triggers, vars, connections)",
      "5 project.color: unknown key (expected one of: name, display_name, triggers, vars, connections)",
      "9 triggers[0].retries: unknown key (expected one of: name, type, webhook, schedule, timezone, connection, event_type, call, is_sync, is_durable, reuse_process, filter, dedup_header, retry)",
      "14 vars[0].about: unknown key (expected one of: name, description, value, secret)",
    ]);
  });

  it("wants exactly one of type: webhook and webhook: {}", () => {
    expect(
      issuesOf(
        lines(
          "version: v2",
          "project: {name: p}",
          "triggers:",
          "  - name: none",
          "    call: a.py:f",
          "  - name: both",
          "    type: webhook",
          "    webhook: {}",
          "  - name: settings",
          "    webhook:",
          "      path: /x",
        ),
      ),
    ).toEqual([
      "4 triggers[0]: a trigger needs type: webhook (or webhook: {}), schedule: <cron> or connection: <name>",
      "8 triggers[1].webhook: give type: webhook or webhook: {}, not both",
      "10 triggers[2].webhook: webhook takes no settings: write webhook: {}",
    ]);
  });

  it("checks trigger fields", () => {
    expect(
      issuesOf(
        lines(
          "version: v2",
          "project: {name: p}",
          "triggers:",
          "  - name: bad name",
          "    type: webhook",
          "    event_type: fetch",
          "    is_durable: 1",
          "  - name: sync",
          "    type: webhook",
          "    is_sync: true",
          "  - name: dup",
          "    type: webhook",
          "  - name: dup",
          "    type: webhook",
          "    filter: 1 + 2",
          "  - name: f",
          "    type: webhook",
          "    filter: data.x.(",
          "  - name: g",
          "    type: webhook",
          "    filter: nope == 1",
        ),
      ),
    ).toEqual([
      '4 triggers[0].name: "bad name" is not a valid name: use letters, digits, "_" and "-" (at most 63), starting with a letter or "_"',
      '6 triggers[0].event_type: "fetch" is not an HTTP method: use get, post, put, patch, delete, head, options, or "*" for all',
      "7 triggers[0].is_durable: expected boolean",
      "10 triggers[1].is_sync: is_sync: true needs call: a trigger without call starts no session to answer the request",
      '13 triggers[3].name: trigger name "dup" is already used by triggers[2]',
      "15 triggers[3].filter: filter must yield a bool, got int",
      "18 triggers[4].filter: invalid filter: at 1:7: found . but expecting end of input",
      '21 triggers[5].filter: unknown variable "nope": a filter sees only data and event_type',
    ]);
  });

  it("refuses reuse_process on a durable trigger, either layout, and without call", () => {
    const v2 = (trigger: string) =>
      issuesOf(lines("version: v2", "project: {name: p}", "triggers:", `  - ${trigger}`));
    const ok = lines(
      "version: v2",
      "project: {name: p}",
      "triggers:",
      "  - {name: t, webhook: {}, call: h.py:f, reuse_process: true}",
    );
    expect(parseManifest(ok).triggers[0]).toMatchObject({ reuse_process: true, is_durable: false });
    expect(
      v2("{name: t, webhook: {}, call: h.py:f, is_durable: true, reuse_process: true}"),
    ).toEqual([
      "4 triggers[0].reuse_process: reuse_process is only for non-durable triggers: a durable session is replayed from fresh module state",
    ]);
    expect(v2("{name: t, webhook: {}, reuse_process: true}")).toEqual([
      "4 triggers[0].reuse_process: reuse_process: true needs call: a trigger without call starts no session",
    ]);
    expect(v2("{name: t, webhook: {}, reuse_process: yes}")).toEqual([
      "4 triggers[0].reuse_process: expected boolean",
    ]);
    // v1 (AutoKitteh's layout): durable unless said otherwise.
    const v1 = (...trigger: string[]) =>
      issuesOf(
        lines("version: v1", "project:", "  name: p", "  triggers:", "    - name: t", ...trigger),
      );
    const webhook = ["      webhook: {}", "      call: h.py:f", "      reuse_process: true"];
    expect(v1(...webhook)).toEqual([
      '8 project.triggers[0].reuse_process: reuse_process is only for non-durable triggers: a durable session is replayed from fresh module state (under version: v1 triggers are durable unless "is_durable: false")',
    ]);
    const m = parseManifest(
      lines(
        "version: v1",
        "project:",
        "  name: p",
        "  triggers:",
        "    - name: t",
        ...webhook,
        "      is_durable: false",
      ),
    );
    expect(m.triggers[0]).toMatchObject({ reuse_process: true, is_durable: false });
  });

  it("checks call paths and function names", () => {
    const call = (c: string) =>
      issuesOf(
        lines(
          "version: v2",
          "project: {name: p}",
          "triggers:",
          `  - {name: t, type: webhook, call: "${c}"}`,
        ),
      );
    expect(call("main.py")).toEqual([
      '4 triggers[0].call: expected "<relative/path.py>:<function>", got "main.py"',
    ]);
    expect(call("/srv/main.py:f")).toEqual([
      "4 triggers[0].call: the path must be relative to the project folder",
    ]);
    expect(call("C:/main.py:f")).toEqual([
      "4 triggers[0].call: the path must be relative to the project folder",
    ]);
    expect(call("a/../../main.py:f")).toEqual([
      '4 triggers[0].call: ".." is not allowed in the path',
    ]);
    expect(call("a\\\\main.py:f")).toEqual(['4 triggers[0].call: use "/" in the path, not "\\"']);
    expect(call("main.js:f")).toEqual(['4 triggers[0].call: the file must be a ".py" file']);
    expect(call("main.py:on-event")).toEqual([
      '4 triggers[0].call: "on-event" is not a Python function name',
    ]);
    expect(call("main.py:")).toEqual(['4 triggers[0].call: "" is not a Python function name']);
  });

  it("checks vars", () => {
    expect(
      issuesOf(
        lines(
          "version: v2",
          "project: {name: p}",
          "vars:",
          "  - name: PORT",
          "    value: 8080",
          "  - name: PATH",
          "    value: /bin",
          "  - {name: PYTHONPATH, value: x}",
          "  - {name: LD_PRELOAD, value: x}",
          "  - {name: SVC_PORT, value: x}",
          "  - {name: 1X, value: x, secret: 'yes'}",
          "  - name: PORT",
          "    value: true",
          "  - value: x",
        ),
      ),
    ).toEqual([
      '6 vars[1].name: "PATH" is reserved for the runtime',
      '8 vars[2].name: names starting with "PYTHON" are reserved for the runtime',
      '9 vars[3].name: names starting with "LD_" are reserved for the runtime',
      '10 vars[4].name: names starting with "SVC_" are reserved for the runtime',
      '11 vars[5].name: "1X" is not a valid variable name: use letters, digits and "_", starting with a letter or "_"',
      "11 vars[5].secret: expected boolean",
      '12 vars[6].name: var name "PORT" is already used by vars[0]',
      "14 vars[7].name: required",
    ]);
  });

  it("reads AutoKitteh's display_name and descriptions, either layout, and checks them", () => {
    const m = parseManifest(
      lines(
        "version: v1",
        "project:",
        "  name: p",
        "  display_name: The P project",
        "  vars:",
        "    - name: A",
        "      description: what A is for",
        "      value: x",
        "    - name: B",
        "      description:",
        "  connections:",
        "    - name: c",
        "      integration: jira",
        "      vars:",
        "        - {name: BaseURL, description: your site, value: 'https://x'}",
      ),
    );
    expect(m.project).toEqual({ name: "p", display_name: "The P project" });
    expect(m.vars.map((x) => [x.name, x.description])).toEqual([
      ["A", "what A is for"],
      ["B", ""],
      ["c__BaseURL", "your site"],
    ]);
    expect(
      issuesOf(
        lines(
          "version: v2",
          "project: {name: p, display_name: [1]}",
          "vars:",
          "  - {name: A, description: {x: 1}}",
          `  - {name: B, description: ${"d".repeat(4097)}}`,
        ),
      ),
    ).toEqual([
      "2 project.display_name: expected string",
      "4 vars[0].description: expected string",
      "5 vars[1].description: at most 4,096 characters",
    ]);
  });

  it("refuses both layouts at once", () => {
    expect(
      issuesOf(
        lines(
          "version: v2",
          "project:",
          "  name: p",
          "  triggers:",
          "    - {name: a, type: webhook}",
          "  vars: []",
          "triggers: []",
          "vars:",
          "  - {name: A, value: b}",
        ),
      ),
    ).toEqual([
      "5 project.triggers: triggers given both at the top level and under project: keep one",
      "6 project.vars: vars given both at the top level and under project: keep one",
    ]);
  });

  it("reports every problem at once, sorted by line, with wrong types", () => {
    expect(
      issuesOf(
        lines(
          "vars:",
          "  - name: A",
          "    value: [1]",
          "triggers: {name: t}",
          "version: v9",
          "project:",
          "  name: 5",
        ),
      ),
    ).toEqual([
      "3 vars[0].value: expected string",
      "4 triggers: expected list",
      '5 version: expected "v1" or "v2"',
      "7 project.name: expected string",
    ]);
  });
});
