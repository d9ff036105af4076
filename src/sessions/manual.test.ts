import { describe, expect, it } from "vitest";
import { T } from "../../test/support/records.ts";
import type { ProjectDoc, TriggerRecord } from "../model/records.ts";
import { manualTrigger } from "./manual.ts";

const trigger = (pickle: boolean) =>
  ({ name: "t", ...(pickle && { pickle_values: true }) }) as unknown as TriggerRecord;
const doc = (version: "v1" | "v2" | undefined, triggers: TriggerRecord[] = []) =>
  ({
    project: { id: "prj_1", name: "p", ...(version && { manifest_version: version }) },
    triggers,
  }) as unknown as ProjectDoc;

describe("a manual run's stand-in trigger", () => {
  it("pickles activity values as the project's manifest version says", () => {
    expect(manualTrigger(doc("v2"), "a.py:f", false, T).pickle_values).toBe(true);
    expect(manualTrigger(doc("v1", [trigger(true)]), "a.py:f", false, T)).not.toHaveProperty(
      "pickle_values",
    );
  });

  it("for a project deployed before the version was kept, as its triggers do", () => {
    expect(manualTrigger(doc(undefined, [trigger(true)]), "a.py:f", false, T).pickle_values).toBe(
      true,
    );
    expect(manualTrigger(doc(undefined, [trigger(false)]), "a.py:f", false, T)).not.toHaveProperty(
      "pickle_values",
    );
  });

  it("has no trigger's id or name, the entry point as its call, asynchronous", () => {
    expect(manualTrigger(doc("v1"), "a.py:f", true, T)).toMatchObject({
      id: "",
      name: "",
      call: "a.py:f",
      is_sync: false,
      is_durable: true,
    });
  });
});
