import { CelScalar, celFunc, celMethod, isCelList, isCelMap, parse } from "@bufbuild/cel";
import { strings } from "@bufbuild/cel/ext";

/** Longest filter expression accepted, in characters. */
export const MAX_FILTER_LENGTH = 4096;
/** Items one evaluation of a filter may loop over, all macros together; past it, no match. */
export const MAX_MACRO_ITEMS = 20_000;
/** Longest string `replace` may build while a filter runs; past it the filter does not match. */
export const MAX_REPLACE_RESULT = 1024 * 1024;

type Expr = ReturnType<typeof parse>["expr"];

function boundedReplace(this: string, substr: string, repl: string, num?: bigint): string {
  const limit = num === undefined ? Number.POSITIVE_INFINITY : Number(num);
  let count = 0;
  if (substr !== "") {
    for (
      let i = this.indexOf(substr);
      i !== -1 && count < limit;
      i = this.indexOf(substr, i + substr.length)
    ) {
      count++;
    }
  } else {
    count = Math.min(limit, this.length + 1);
  }
  if (this.length + count * (repl.length - substr.length) > MAX_REPLACE_RESULT) {
    throw new Error(`replace would build more than ${MAX_REPLACE_RESULT} characters`);
  }
  if (count === 0) return this;
  if (substr === "") {
    const chars = [...this];
    return (
      chars.map((c, i) => (i < count ? repl + c : c)).join("") + (count > chars.length ? repl : "")
    );
  }
  let out = "";
  let from = 0;
  for (let n = 0; n < count; n++) {
    const at = this.indexOf(substr, from);
    out += this.slice(from, at) + repl;
    from = at + substr.length;
  }
  return out + this.slice(from);
}

/** What the running evaluation has looped over so far; reset by `resetBudget` per evaluation. */
let itemsLeft = MAX_MACRO_ITEMS;

/**
 * Starts the loop budget of one evaluation.
 * @example resetBudget(); run({ data, event_type });
 */
export function resetBudget(): void {
  itemsLeft = MAX_MACRO_ITEMS;
}

const RANGE_FN = "hookline_range";

/** Every macro's range passes through this: it counts the items against the budget. */
const rangeGuard = celFunc(RANGE_FN, [CelScalar.DYN], CelScalar.DYN, (range) => {
  const size = isCelList(range) || isCelMap(range) ? range.size : 0;
  itemsLeft -= size;
  if (itemsLeft < 0) throw new Error(`a filter may loop over at most ${MAX_MACRO_ITEMS} items`);
  return range;
});

/**
 * Routes the range of every macro in `expr` through the budget guard, in place. The evaluator
 * runs macros synchronously and cannot be interrupted, so their cost is bounded before it starts.
 * @example const parsed = parse("data.a.exists(x, x == 1)"); guardRanges(parsed.expr); plan(ENV, parsed);
 */
export function guardRanges(expr: Expr): void {
  const visit = (e: Expr | undefined): void => {
    if (!e) return;
    const kind = e.exprKind;
    switch (kind.case) {
      case "selectExpr":
        visit(kind.value.operand);
        return;
      case "callExpr":
        visit(kind.value.target);
        for (const a of kind.value.args) visit(a);
        return;
      case "listExpr":
        for (const x of kind.value.elements) visit(x);
        return;
      case "structExpr":
        for (const entry of kind.value.entries) {
          if (entry.keyKind.case === "mapKey") visit(entry.keyKind.value);
          visit(entry.value);
        }
        return;
      case "comprehensionExpr": {
        const c = kind.value;
        for (const x of [c.iterRange, c.accuInit, c.loopCondition, c.loopStep, c.result]) visit(x);
        const call = parse(`${RANGE_FN}(0)`).expr;
        if (call.exprKind.case !== "callExpr" || !c.iterRange) return;
        call.exprKind.value.args[0] = c.iterRange;
        c.iterRange = call;
        return;
      }
    }
  };
  visit(expr);
}

/**
 * The strings extension with `replace` bounded: chained replaces (`s.replace("a", "aa")` again and
 * again) would otherwise grow a string exponentially and take the process down.
 */
export const boundedStrings = [
  ...strings.filter((f) => f.name !== "replace"),
  celMethod(
    "replace",
    CelScalar.STRING,
    [CelScalar.STRING, CelScalar.STRING],
    CelScalar.STRING,
    boundedReplace,
  ),
  celMethod(
    "replace",
    CelScalar.STRING,
    [CelScalar.STRING, CelScalar.STRING, CelScalar.INT],
    CelScalar.STRING,
    boundedReplace,
  ),
  rangeGuard,
];

/**
 * Why a parsed filter could cost more than linear time in its data, or null. A comprehension
 * (`all`, `exists`, `exists_one`, `map`, `filter`) nested inside another's body must range over
 * part of an enclosing element (`c.files`), itself taken from `data`: then each piece of the event
 * is visited once per level, whatever its size. Ranging again over `data` (or over a list the
 * outer loop built) would multiply the sizes: `data.a.all(x, data.a.all(y, …))` is quadratic.
 * @example boundsProblem(parse("data.a.all(x, data.a.all(y, x == y))").expr) // "…"
 */
export function boundsProblem(expr: Expr): string | null {
  // Iteration variables whose elements are parts of `data`, as opposed to built lists.
  const walk = (e: Expr | undefined, dataVars: Set<string>, depth: number): string | null => {
    if (!e) return null;
    const kind = e.exprKind;
    switch (kind.case) {
      case "selectExpr":
        return walk(kind.value.operand, dataVars, depth);
      case "callExpr": {
        for (const x of [kind.value.target, ...kind.value.args]) {
          const p = walk(x, dataVars, depth);
          if (p) return p;
        }
        return null;
      }
      case "listExpr":
        for (const x of kind.value.elements) {
          const p = walk(x, dataVars, depth);
          if (p) return p;
        }
        return null;
      case "structExpr":
        for (const entry of kind.value.entries) {
          const key = entry.keyKind.case === "mapKey" ? entry.keyKind.value : undefined;
          const p = walk(key, dataVars, depth) ?? walk(entry.value, dataVars, depth);
          if (p) return p;
        }
        return null;
      case "comprehensionExpr": {
        const c = kind.value;
        const root = rootName(c.iterRange);
        if (depth > 0 && !(root && dataVars.has(root))) {
          return (
            "a macro (all, exists, exists_one, map, filter) inside another must range over a part " +
            "of the enclosing element (for example c.files), so that its cost stays linear"
          );
        }
        const p = walk(c.iterRange, dataVars, depth) ?? walk(c.accuInit, dataVars, depth);
        if (p) return p;
        const inner = new Set(dataVars);
        // Elements of a range rooted in data (or in such an element) are parts of data.
        if (root === "data" || (root && dataVars.has(root))) inner.add(c.iterVar);
        else inner.delete(c.iterVar);
        inner.delete(c.accuVar);
        for (const x of [c.loopCondition, c.loopStep]) {
          const q = walk(x, inner, depth + 1);
          if (q) return q;
        }
        return walk(c.result, dataVars, depth);
      }
      default:
        return null;
    }
  };
  return walk(expr, new Set(), 0);
}

/** `x` for `x`, `x.a.b`, `x["a"]`; null for anything computed. */
function rootName(e: Expr | undefined): string | null {
  let cur = e;
  while (cur) {
    const kind = cur.exprKind;
    if (kind.case === "identExpr") return kind.value.name;
    if (kind.case === "selectExpr") cur = kind.value.operand;
    else if (kind.case === "callExpr" && kind.value.function === "_[_]") cur = kind.value.args[0];
    else return null;
  }
  return null;
}
