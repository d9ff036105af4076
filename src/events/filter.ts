import { CelScalar, celEnv, parse, plan } from "@bufbuild/cel";
import {
  boundedStrings,
  boundsProblem,
  guardRanges,
  MAX_FILTER_LENGTH,
  resetBudget,
} from "./filter-bounds.ts";

/** Why a filter expression was refused; the message is meant for the user as is. */
export class FilterError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "FilterError";
  }
}

/** What a filter is evaluated against: one event of a trigger. */
export interface FilterInput {
  data: unknown;
  event_type: string;
}

/** A compiled filter. `matches` never throws: an evaluation error is "no match". */
export interface Filter {
  readonly source: string;
  matches(input: FilterInput): boolean;
}

const ENV = celEnv({
  variables: { data: CelScalar.DYN, event_type: CelScalar.STRING },
  funcs: boundedStrings,
});

/** Type names CEL lets an expression use as values (`type(x) == string`). */
const TYPE_IDENTS = new Set(
  "bool int uint double string bytes list map null_type type dyn".split(" "),
);

type Expr = ReturnType<typeof parse>["expr"];

/**
 * The result type of `expr` as far as it can be known without types for `data`, or "dyn".
 * @bufbuild/cel 0.6's checker handles only identifiers and constants, so this covers the
 * top-level shapes that decide the result type; `dyn` results are checked at evaluation.
 */
function resultType(expr: Expr, scope: Map<string, string>): string {
  const kind = expr.exprKind;
  switch (kind.case) {
    case "constExpr":
      return CONST_TYPES[kind.value.constantKind.case ?? ""] ?? "dyn";
    case "identExpr":
      return scope.get(kind.value.name) ?? "dyn";
    case "selectExpr":
      return kind.value.testOnly ? "bool" : "dyn";
    case "listExpr":
      return "list";
    case "structExpr":
      return kind.value.messageName || "map";
    case "comprehensionExpr": {
      const { accuVar, accuInit, result } = kind.value;
      if (!accuInit || !result) return "dyn";
      return resultType(result, new Map(scope).set(accuVar, resultType(accuInit, scope)));
    }
    case "callExpr": {
      const { function: fn, args } = kind.value;
      if (fn === "_?_:_" && args.length === 3) {
        const [a, b] = [resultType(args[1]!, scope), resultType(args[2]!, scope)];
        return a === b ? a : "dyn";
      }
      if (ARITHMETIC.has(fn)) {
        return args.map((a) => resultType(a, scope)).find((t) => t !== "dyn") ?? "dyn";
      }
      return CALL_TYPES[fn] ?? "dyn";
    }
    default:
      return "dyn";
  }
}

const CONST_TYPES: Record<string, string> = {
  boolValue: "bool",
  int64Value: "int",
  uint64Value: "uint",
  doubleValue: "double",
  stringValue: "string",
  bytesValue: "bytes",
  nullValue: "null_type",
};
const ARITHMETIC = new Set(["_+_", "_-_", "_*_", "_/_", "_%_", "-_"]);
const CALL_TYPES: Record<string, string> = {
  ...Object.fromEntries(
    "_==_ _!=_ _<_ _<=_ _>_ _>=_ _&&_ _||_ !_ @in @not_strictly_false contains startsWith endsWith matches bool"
      .split(" ")
      .map((f) => [f, "bool"]),
  ),
  ...Object.fromEntries(
    "size int indexOf lastIndexOf getSeconds getMinutes getHours getMilliseconds getFullYear getMonth getDate getDayOfMonth getDayOfWeek getDayOfYear"
      .split(" ")
      .map((f) => [f, "int"]),
  ),
  ...Object.fromEntries(
    "string lowerAscii upperAscii trim replace substring charAt join format strings.quote"
      .split(" ")
      .map((f) => [f, "string"]),
  ),
  uint: "uint",
  double: "double",
  bytes: "bytes",
  type: "type",
  split: "list",
  timestamp: "google.protobuf.Timestamp",
  duration: "google.protobuf.Duration",
};

/** Refuses names the evaluator would only fail on at run time: unknown variables and functions. */
function checkNames(expr: Expr, bound: Set<string>): void {
  const kind = expr.exprKind;
  switch (kind.case) {
    case "identExpr": {
      const name = kind.value.name;
      if (!bound.has(name) && !TYPE_IDENTS.has(name)) {
        throw new FilterError(`unknown variable "${name}": a filter sees only data and event_type`);
      }
      return;
    }
    case "selectExpr":
      if (kind.value.operand) checkNames(kind.value.operand, bound);
      return;
    case "callExpr":
      // Operators (`_&&_`, `@not_strictly_false`) come from the parser and the planner knows them.
      if (/^[A-Za-z]/.test(kind.value.function) && !ENV.funcs.find(kind.value.function)) {
        throw new FilterError(`unknown function "${kind.value.function}"`);
      }
      if (kind.value.target) checkNames(kind.value.target, bound);
      for (const arg of kind.value.args) checkNames(arg, bound);
      return;
    case "listExpr":
      for (const el of kind.value.elements) checkNames(el, bound);
      return;
    case "structExpr":
      for (const entry of kind.value.entries) {
        if (entry.keyKind.case === "mapKey") checkNames(entry.keyKind.value, bound);
        if (entry.value) checkNames(entry.value, bound);
      }
      return;
    case "comprehensionExpr": {
      const c = kind.value;
      if (c.iterRange) checkNames(c.iterRange, bound);
      if (c.accuInit) checkNames(c.accuInit, bound);
      const inner = new Set(bound).add(c.iterVar).add(c.iterVar2).add(c.accuVar);
      for (const e of [c.loopCondition, c.loopStep, c.result]) if (e) checkNames(e, inner);
      return;
    }
  }
}

/** Header names arrive canonical (`X-Kind`); let filters look them up in any case. */
class HeaderMap extends Map<string, unknown> {
  override get(key: string): unknown {
    return (
      super.get(key) ?? (typeof key === "string" ? this.#lower().get(key.toLowerCase()) : undefined)
    );
  }
  #lowered: Map<string, unknown> | undefined;
  #lower(): Map<string, unknown> {
    this.#lowered ??= new Map([...this].map(([k, v]) => [k.toLowerCase(), v]));
    return this.#lowered;
  }
}

function isRecord(v: unknown): v is Record<string, unknown> {
  if (typeof v !== "object" || v === null) return false;
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

/**
 * The small, fixed levels of webhook data (data, url, query, headers, body, form) as Maps: the
 * evaluator copies a plain object into a Map at every access, so converting once is about twice as
 * fast when several filters see one event. `json` stays as is (any size; read lazily), and
 * null-prototype objects, which the evaluator rejects, become Maps too.
 */
function toCelMap(
  obj: Record<string, unknown>,
  depth: number,
  headers = false,
): Map<string, unknown> {
  const map = headers ? new HeaderMap() : new Map<string, unknown>();
  for (const k of Object.keys(obj)) {
    const v = obj[k];
    const convert = isRecord(v) && (depth < 3 || Object.getPrototypeOf(v) === null) && k !== "json";
    map.set(k, convert ? toCelMap(v, depth + 1, depth === 0 && k === "headers") : v);
  }
  return map;
}

// One event is matched against its triggers and subscriptions one after the other: remember the
// last one prepared. (A WeakMap cache measured slower than converting again: ~4 µs a new key.)
let last: { data: object; map: unknown } | undefined;

function celData(data: unknown): unknown {
  if (!isRecord(data)) return data ?? null;
  if (last?.data !== data) last = { data, map: toCelMap(data, 0) };
  return last.map;
}

const MATCH_ALL: Filter = { source: "", matches: () => true };

function build(source: string): Filter {
  if (source.length > MAX_FILTER_LENGTH) {
    throw new FilterError(`invalid filter: longer than ${MAX_FILTER_LENGTH} characters`);
  }
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(source);
  } catch (e) {
    const reason = (e instanceof Error ? e.message : String(e)).replace(/^<input>:/, "at ");
    throw new FilterError(`invalid filter: ${reason}`);
  }
  checkNames(parsed.expr, new Set(["data", "event_type"]));
  const type = resultType(parsed.expr, new Map([["event_type", "string"]]));
  if (type !== "bool" && type !== "dyn") {
    throw new FilterError(`filter must yield a bool, got ${type}`);
  }
  const tooCostly = boundsProblem(parsed.expr);
  if (tooCostly) throw new FilterError(`invalid filter: ${tooCostly}`);
  guardRanges(parsed.expr);
  const run = plan(ENV, parsed);
  // Preparing data costs more than most evaluations; skip it when the text never says `data`
  // (a false "yes", e.g. inside a string literal, only costs the preparation).
  const usesData = /\bdata\b/.test(source);
  return {
    source,
    matches(input) {
      try {
        // A non-bool result (possible only when the type hangs on `data`) is no match.
        const data = usesData ? (celData(input.data) as never) : null;
        resetBudget();
        const result = run({ data, event_type: input.event_type });
        return result === true;
      } catch {
        return false;
      }
    },
  };
}

const CACHE_SIZE = 256;
const cache = new Map<string, Filter>();

/**
 * Compiles a CEL filter over `data` and `event_type`. An empty expression matches every event.
 * Compiled filters are cached by source (least recently used out first).
 * @throws FilterError when the expression does not parse, names something unknown, or cannot
 *   yield a bool.
 * @example
 * const f = compileFilter('data.url.path.endsWith("/done") && event_type == "post"');
 * f.matches({ data: { url: { path: "/x/done" } }, event_type: "post" }); // true
 */
export function compileFilter(expr: string): Filter {
  if (expr.trim() === "") return MATCH_ALL;
  let filter = cache.get(expr);
  if (filter) {
    // Re-insert so Map order doubles as recency order.
    cache.delete(expr);
  } else {
    filter = build(expr);
    if (cache.size >= CACHE_SIZE) cache.delete(cache.keys().next().value!);
  }
  cache.set(expr, filter);
  return filter;
}
