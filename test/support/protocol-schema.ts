import { readFileSync } from "node:fs";
import * as v from "valibot";
import { notArray } from "../../src/wire/checks.ts";

/**
 * The session protocol's one definition (python-runtime/workflow_sdk/runner/protocol.json) read
 * on the TypeScript side, with its shared fixtures, and made into valibot schemas by the file's
 * own vocabulary: what the runner's schema.py does in Python. Tests check what the service sends
 * (start, reply, ack, stop, journal steps) with these.
 */

export type Spec = { [key: string]: unknown };
export interface Protocol {
  formats: Record<string, { pattern: string; length_multiple_of?: number }>;
  types: Record<string, Spec>;
  messages: Record<string, { direction: string; fields: Record<string, Spec> } & Spec>;
}
export interface Case {
  direction: "to_service" | "to_child";
  why?: string;
  line?: string;
  message?: Spec;
}

const read = <T>(path: string): T =>
  JSON.parse(readFileSync(new URL(`../../python-runtime/${path}`, import.meta.url), "utf8"));
export const protocol = read<Protocol>("workflow_sdk/runner/protocol.json");
export const fixtures = read<{ valid: Case[]; invalid: Case[] }>("tests/fixtures/protocol.json");

/** A field spec with its `ref` (a name under `types`) merged in. */
export function resolve(spec: Spec): Spec {
  if (typeof spec.ref !== "string") return spec;
  const { ref: _, ...rest } = spec;
  return { ...resolve(protocol.types[spec.ref]!), ...rest };
}

type Schema = v.GenericSchema;
/** valibot's action types differ by input; the pipe built here is checked by running it. */
type Action = unknown;

function typed(spec: Spec): Schema {
  const actions: Action[] = [];
  const add = (when: unknown, action: () => Action) => when !== undefined && actions.push(action());
  let base: Schema;
  switch (spec.type) {
    case "string": {
      base = v.string();
      const format = protocol.formats[spec.format as string];
      add(format, () => {
        const re = new RegExp(`^(?:${format!.pattern})$`, "s");
        const n = format!.length_multiple_of ?? 1;
        return v.check((s: string) => s.length % n === 0 && re.test(s), `not ${spec.format}`);
      });
      add(spec.pattern, () => v.regex(new RegExp(spec.pattern as string)));
      break;
    }
    case "integer":
    case "number":
      base = v.number();
      add(spec.type === "integer" || undefined, () => v.integer());
      add(spec.min, () => v.minValue(spec.min as number));
      add(spec.max, () => v.maxValue(spec.max as number));
      add(spec.exclusive_min, () => v.gtValue(spec.exclusive_min as number));
      break;
    case "boolean":
      base = v.boolean();
      break;
    case "array": {
      base = v.array(spec.items ? field(spec.items as Spec) : v.unknown());
      add(spec.min_items, () => v.minLength(spec.min_items as number));
      const indexed = (a: unknown[]) => a.every((s, i) => (s as Spec | null)?.seq === i);
      add(spec.seq_is_index || undefined, () => v.check(indexed, "seq out of order"));
      break;
    }
    case "map":
      base = jsonObject(
        v.record(v.string(), spec.values ? field(spec.values as Spec) : v.unknown()),
      );
      break;
    case "object":
      base = jsonObject(spec.variant ? variant(spec) : object(spec));
      break;
    default:
      return v.unknown();
  }
  add(spec.enum, () => v.check((x) => (spec.enum as unknown[]).includes(x), "not in enum"));
  add(spec.const, () => v.value(spec.const as never));
  return actions.length ? v.pipe(base, ...(actions as [])) : base;
}

/** valibot's objects and records take arrays too: refuse those first. */
const jsonObject = (schema: Schema): Schema =>
  v.pipe(v.unknown(), v.check(notArray, "not an object"), schema);

function field(raw: Spec): Schema {
  const spec = resolve(raw);
  const schema = typed(spec);
  if (spec.optional && spec.nullable) return v.nullish(schema);
  if (spec.optional) return v.optional(schema);
  return spec.nullable ? v.nullable(schema) : schema;
}

/** Known members, others allowed; then the rules between members. */
function object(spec: Spec): Schema {
  const fields = (spec.fields ?? {}) as Record<string, Spec>;
  const entries = Object.fromEntries(Object.entries(fields).map(([k, f]) => [k, field(f)]));
  const present = (o: Spec, k: string) => o[k] !== undefined && o[k] !== null;
  const rules = [
    ...Object.entries(fields).flatMap(([name, f]) =>
      Object.entries((f.required_when ?? {}) as Spec).map(
        ([other, value]) =>
          (o: Spec) =>
            o[other] !== value || present(o, name),
      ),
    ),
    ...((spec.exactly_one_of ?? []) as string[][]).map(
      (g) => (o: Spec) => g.filter((k) => present(o, k)).length === 1,
    ),
    ...((spec.at_least_one_of ?? []) as string[][]).map(
      (g) => (o: Spec) => g.some((k) => present(o, k)),
    ),
  ];
  const obj = v.looseObject(entries);
  if (!rules.length) return obj;
  return v.pipe(
    obj,
    v.check((o) => rules.every((rule) => rule(o as Spec)), "a rule between members"),
  );
}

function variant(spec: Spec): Schema {
  const key = spec.variant as string;
  const cases = Object.entries(spec.cases as Record<string, Spec>).map(([name, c]) =>
    object({ ...c, fields: { ...(c.fields as Spec), [key]: { type: "string", const: name } } }),
  );
  return v.union(cases);
}

/**
 * The valibot schema of one message type, from the file.
 * @example v.is(messageSchema("ack"), { type: "ack", seq: 0 }) // true
 */
export function messageSchema(type: string): Schema {
  const m = protocol.messages[type];
  if (!m) throw new Error(`protocol.json has no message "${type}"`);
  return object({ ...m, fields: { ...m.fields, type: { type: "string", const: type } } });
}

/**
 * Whether `message` is a valid message of `direction` by the file alone.
 * @example conforms({ type: "stop" }, "to_child") // true
 */
export function conforms(message: unknown, direction: Case["direction"]): boolean {
  const type = (message as Spec | null)?.type;
  const m = typeof type === "string" ? protocol.messages[type] : undefined;
  return m?.direction === direction && v.is(messageSchema(type as string), message);
}
