import { readFileSync } from "node:fs";
import * as v from "valibot";
import { describe, expect, it } from "vitest";
import { isBase64 } from "../../base64.ts";
import { FromPython, parseMessage } from "./protocol.ts";

/**
 * The service's check of what Python sends, against the protocol's one definition
 * (python-runtime/workflow_sdk/runner/protocol.json) and the fixtures the Python tests load too.
 */

type Spec = { [key: string]: unknown };
interface Protocol {
  types: Record<string, Spec>;
  messages: Record<string, { direction: string; fields: Record<string, Spec> } & Spec>;
}
interface Case {
  direction: "to_service" | "to_child";
  why?: string;
  line?: string;
  message?: Spec;
}

const read = <T>(path: string): T =>
  JSON.parse(readFileSync(new URL(`../../../python-runtime/${path}`, import.meta.url), "utf8"));
const protocol = read<Protocol>("workflow_sdk/runner/protocol.json");
const fixtures = read<{ valid: Case[]; invalid: Case[] }>("tests/fixtures/protocol.json");

/** A field spec of the file as compared: references resolved, prose and defaults dropped. */
function normalize(spec: Spec): Spec {
  const base = typeof spec.ref === "string" ? normalize(protocol.types[spec.ref]!) : {};
  const out: Spec = { ...base };
  for (const [key, value] of Object.entries(spec)) {
    if (key === "ref" || key === "doc") continue;
    if (key === "items" || key === "values") out[key] = normalize(value as Spec);
    else out[key] = value;
  }
  return out;
}

interface Node {
  type: string;
  pipe?: Node[];
  wrapped?: Node;
  entries?: Record<string, Node>;
  item?: Node;
  value?: Node;
  literal?: unknown;
  options?: unknown[];
  requirement?: unknown;
}

/** A valibot schema in the file's vocabulary, so the two can be compared member by member. */
function spec(schema: Node): Spec {
  if (schema.type === "optional") return { ...spec(schema.wrapped!), optional: true };
  if (schema.type === "nullable") return { ...spec(schema.wrapped!), nullable: true };
  if (schema.type === "nullish")
    return { ...spec(schema.wrapped!), optional: true, nullable: true };
  const [first, ...actions] = schema.pipe ?? [];
  // In a pipe the first item is the schema before its actions (itself perhaps piped).
  const out: Spec = first && first !== schema ? spec(first) : base(schema);
  for (const action of actions) {
    if (action.type === "integer") out.type = "integer";
    else if (action.type === "min_value") out.min = action.requirement;
    else if (action.type === "max_value") out.max = action.requirement;
    else if (action.type === "min_length") out.min_items = action.requirement;
    else if (action.type === "check" && action.requirement === isBase64) out.format = "base64";
    else if (action.type === "check") out.rules = ((out.rules as number) ?? 0) + 1;
    else if (action.type === "metadata") continue;
    else throw new Error(`no rule of protocol.json says "${action.type}"`);
  }
  return out;
}

function base(schema: Node): Spec {
  switch (schema.type) {
    case "string":
    case "number":
    case "boolean":
      return { type: schema.type };
    case "unknown":
      return { type: "any" };
    case "literal":
      return { type: typeof schema.literal, const: schema.literal };
    case "picklist":
      return { type: "string", enum: schema.options };
    case "array":
      return { type: "array", items: spec(schema.item!) };
    case "record":
      return { type: "map", values: spec(schema.value!) };
    case "object": {
      const fields = Object.entries(schema.entries!).filter(([name]) => name !== "type");
      return { type: "object", fields: Object.fromEntries(fields.map(([k, f]) => [k, spec(f)])) };
    }
    default:
      throw new Error(`protocol.json has no type for valibot's "${schema.type}"`);
  }
}

const options = FromPython.options as unknown as Node[];
const typeOf = (o: Node) => {
  const object = o.pipe?.[0] ?? o;
  return object.entries!.type!.literal as string;
};

describe("the Python protocol: protocol.ts against protocol.json", () => {
  const toService = Object.entries(protocol.messages).filter(
    ([, m]) => m.direction === "to_service",
  );

  it("checks exactly the message types Python may send", () => {
    expect(options.map(typeOf).sort()).toEqual(toService.map(([name]) => name).sort());
  });

  for (const [name, message] of toService) {
    it(`declares "${name}" field for field as the file does`, () => {
      const option = options.find((o) => typeOf(o) === name)!;
      const declared = spec(option);
      const rules = [
        ...((message.exactly_one_of as unknown[]) ?? []),
        ...((message.at_least_one_of as unknown[]) ?? []),
      ].length;
      expect(declared.fields).toEqual(
        Object.fromEntries(Object.entries(message.fields).map(([k, f]) => [k, normalize(f)])),
      );
      expect(declared.rules ?? 0).toBe(rules);
    });
  }
});

describe("the Python protocol: shared fixtures", () => {
  const line = (c: Case) => c.line ?? JSON.stringify(c.message);

  it("accepts every valid message Python may send", () => {
    const cases = fixtures.valid.filter((c) => c.direction === "to_service");
    expect(cases.length).toBeGreaterThan(10);
    for (const c of cases) {
      const parsed = parseMessage(line(c));
      expect(parsed, line(c)).toMatchObject({ ok: true });
    }
  });

  it("refuses every invalid one, with a reason", () => {
    const cases = fixtures.invalid.filter((c) => c.direction === "to_service");
    expect(cases.length).toBeGreaterThan(10);
    for (const c of cases) {
      const parsed = parseMessage(line(c));
      expect(parsed.ok, `${c.why}: ${line(c)}`).toBe(false);
      if (!parsed.ok) expect(parsed.reason).not.toBe("");
    }
  });

  it("reads the file's base64 format as isBase64 does", () => {
    const format = (protocol as unknown as { formats: Record<string, Spec> }).formats.base64!;
    const re = new RegExp(`^(?:${format.pattern})$`, "s");
    const samples = ["", "aGk=", "aGk", "AB=C", "A===", "AA==", "AAAAAA+/", "a b=", "%%%%"];
    for (const s of samples) {
      const byFile = s.length % (format.length_multiple_of as number) === 0 && re.test(s);
      expect(isBase64(s), s).toBe(byFile);
    }
  });

  it("checks an outcome of 6 MB without running out of stack", () => {
    const body = Buffer.alloc(6 * 1024 * 1024).toString("base64");
    const message = { type: "outcome", status_code: 200, headers: {}, body, more: false };
    expect(parseMessage(JSON.stringify(message)).ok).toBe(true);
    expect(parseMessage(JSON.stringify({ ...message, body: `${body}=` })).ok).toBe(false);
  });

  it("parses what it accepts to the message as sent", () => {
    const hello = fixtures.valid.find((c) => c.message?.type === "hello")!;
    expect(v.parse(FromPython, hello.message)).toEqual(hello.message);
  });
});
