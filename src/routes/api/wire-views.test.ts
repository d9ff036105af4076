import type * as v from "valibot";
import { describe, expect, it } from "vitest";
import type {
  ConnectionView,
  ProblemView,
  StoreValueView,
  TriggerView,
  VarView,
} from "../../wire/views.ts";
import type { StoreValue } from "./kv-contract.ts";
import type { Connection, Problem, Trigger, Var } from "./schemas.ts";

/** Compiles only when `A` is assignable to `B`: tsc checks the test files too. */
const is = <_A extends B, B>() => true;

describe("the wire views (src/wire/views.ts)", () => {
  it("are what the API answers: each schema's output is one (checked by tsc)", () => {
    expect(is<v.InferOutput<typeof Trigger>, TriggerView>()).toBe(true);
    expect(is<v.InferOutput<typeof Connection>, ConnectionView>()).toBe(true);
    expect(is<v.InferOutput<typeof Var>, VarView>()).toBe(true);
    expect(is<v.InferOutput<typeof StoreValue>, StoreValueView>()).toBe(true);
    expect(is<v.InferOutput<typeof Problem>, ProblemView>()).toBe(true);
  });
});
