import { Duplex } from "node:stream";
import * as v from "valibot";
import { describe, expect, it } from "vitest";
import {
  type Case,
  conforms,
  fixtures,
  protocol,
  resolve,
  type Spec,
} from "../../../test/support/protocol-schema.ts";
import { recordingHost, testEvent, testSpec } from "../../../test/support/test-host.ts";
import { isBase64, isHeaderName, isHeaderValue, notArray } from "../../wire/checks.ts";
import type { SessionSpec } from "../runtime.ts";
import { FromPython, parseMessage } from "./protocol.ts";
import { toStartMessage } from "./requests.ts";
import { SessionSocket } from "./session-socket.ts";

/**
 * The service's side of the Python protocol against its one definition
 * (python-runtime/workflow_sdk/runner/protocol.json) and the fixtures the Python tests load too:
 * the check of what Python sends, and what the service itself sends and journals.
 */

/** A field spec of the file as compared: references resolved, prose and defaults dropped. */
function normalize(raw: Spec): Spec {
  const { doc: _, ...spec } = resolve(raw);
  for (const key of ["items", "values"]) if (spec[key]) spec[key] = normalize(spec[key] as Spec);
  return spec;
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
  kind?: string;
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
    else if (action.type === "check" && action.requirement === isHeaderValue)
      out.format = "header_value";
    else if (action.type === "check" && action.requirement === isHeaderName)
      out.format = "header_name";
    else if (action.type === "check" && action.requirement === notArray)
      continue; // a JSON object
    else if (action.type === "check") out.rules = ((out.rules as number) ?? 0) + 1;
    else if (action.type === "metadata") continue;
    else if (action.kind === "schema")
      Object.assign(out, spec(action)); // the type, after checks
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
    const format = protocol.formats.base64!;
    const re = new RegExp(`^(?:${format.pattern})$`, "s");
    const samples = ["", "aGk=", "aGk", "AB=C", "A===", "AA==", "AAAAAA+/", "a b=", "%%%%"];
    for (const s of samples) {
      const byFile = s.length % format.length_multiple_of! === 0 && re.test(s);
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

describe("the Python protocol: the file read on this side", () => {
  const line = (c: Case) => c.line ?? JSON.stringify(c.message);
  const parse = (c: Case) => {
    try {
      return JSON.parse(line(c)) as unknown;
    } catch {
      return undefined;
    }
  };

  it("accepts every valid fixture and refuses every invalid one, both directions", () => {
    for (const c of fixtures.valid) expect(conforms(parse(c), c.direction), line(c)).toBe(true);
    for (const c of fixtures.invalid) expect(conforms(parse(c), c.direction), c.why).toBe(false);
  });

  it("tells Python in `start` whether to pickle activity values: durable, or a v2 manifest's", () => {
    const cases: [Partial<SessionSpec>, boolean][] = [
      [{ durable: false, pickleValues: true }, true], // version: v2, not durable
      [{ durable: false, pickleValues: false }, false], // version: v1, not durable
      [{ durable: false }, false],
      [{ durable: true }, true],
    ];
    for (const [over, pickled] of cases) {
      const start = toStartMessage(testSpec(over), "/data/builds/bld_01", false);
      expect(start.pickle_values, `pickle_values of ${JSON.stringify(over)}`).toBe(pickled);
      expect(conforms(start, "to_child"), JSON.stringify(start)).toBe(true);
    }
  });

  /** A session socket whose Python end is the test: lines in, every line the service wrote out. */
  function fakeSocket() {
    const sent: Spec[] = [];
    const socket = new Duplex({
      read() {},
      write(chunk: Buffer, _encoding, done) {
        for (const l of chunk.toString().split("\n")) if (l) sent.push(JSON.parse(l));
        done();
      },
    });
    const say = (m: Spec) => socket.push(`${JSON.stringify(m)}\n`);
    return { socket, sent, say };
  }

  it("matches what the service sends and journals", async () => {
    const journal = [{ seq: 0, kind: "activity" as const, function: "m.f", result: "gA==" }];
    const spec = testSpec({ durable: true, journal });
    const host = recordingHost(spec);
    host.events.push({ ...testEvent(), event_id: "evt_02" });
    const { socket, sent, say } = fakeSocket();
    const channel = new SessionSocket(socket, spec, "/data/builds/bld_01", host, {
      stopGraceMs: 50,
      kill: () => socket.destroy(),
    });
    const answered = async (n: number) => {
      await expect.poll(() => sent.length).toBeGreaterThanOrEqual(n);
    };
    say({ type: "hello", pid: 4242 });
    await answered(1);
    say({ type: "subscribe", req: 1, name: "hook", filter: "", seq: 1 });
    await answered(2);
    say({ type: "subscribe", req: 2, name: "nope", filter: "", seq: 2 });
    await answered(3);
    say({ type: "next_event", req: 3, ids: ["sub_1"], timeout: 1, seq: 3 });
    await answered(4);
    say({ type: "step", seq: 4, kind: "activity", function: "m.g", error: "gA==" });
    await answered(5);
    say({ type: "outcome", status_code: 200, headers: {}, body: null, more: false, seq: 5 });
    await channel.stop();
    expect(sent.map((m) => m.type)).toEqual(["start", "reply", "reply", "reply", "ack", "stop"]);
    for (const m of sent) expect(conforms(m, "to_child"), JSON.stringify(m)).toBe(true);
    // A resumed session gets what was journaled back in `start`: Python must accept it.
    expect(host.journaled.map((s) => s.seq)).toEqual([1, 2, 3, 4, 5]);
    const resumed = { ...sent[0]!, journal: [...journal, ...host.journaled] };
    expect(conforms(resumed, "to_child"), JSON.stringify(resumed.journal)).toBe(true);
  });
});
