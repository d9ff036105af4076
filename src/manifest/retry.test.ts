import { describe, expect, it } from "vitest";
import { issuesOf, lines } from "../../test/support/manifest.ts";
import { parseManifest } from "./index.ts";
import { planDeploy } from "./plan.ts";

/** A manifest with one webhook trigger whose `retry:` is `retry` (lines, indented under it). */
const withRetry = (...retry: string[]) =>
  lines(
    "version: v2",
    "project: {name: p}",
    "triggers:",
    "  - name: t",
    "    type: webhook",
    "    call: h.py:f",
    "    retry:",
    ...retry.map((l) => `      ${l}`),
  );

describe("a trigger's retry:", () => {
  it("fills in RetryPolicy's defaults for the keys left out", () => {
    const m = parseManifest(withRetry("max_attempts: 5", "non_retryable: [PermissionError]"));
    expect(m.triggers[0]!.retry).toEqual({
      max_attempts: 5,
      initial_interval: 1,
      backoff: 2,
      max_interval: 60,
      non_retryable: ["PermissionError"],
    });
    const bare = parseManifest(
      lines("version: v2", "project: {name: p}", "triggers:", "  - {name: t, type: webhook}"),
    );
    expect(bare.triggers[0]!.retry).toBeNull(); // no policy: an exception reaches the workflow at once
    const long = parseManifest(withRetry("initial_interval: 120"));
    expect(long.triggers[0]!.retry?.max_interval).toBe(120); // never below the first wait
  });

  it("keeps each key given, backoff included", () => {
    const m = parseManifest(
      withRetry(
        "max_attempts: 7",
        "initial_interval: 0.5",
        "backoff: 3",
        "max_interval: 30",
        "non_retryable: [KeyError]",
      ),
    );
    expect(m.triggers[0]!.retry).toEqual({
      max_attempts: 7,
      initial_interval: 0.5,
      backoff: 3,
      max_interval: 30,
      non_retryable: ["KeyError"],
    });
    expect(parseManifest(withRetry("backoff: 1")).triggers[0]!.retry?.backoff).toBe(1);
  });

  it("names the file line and key of each mistake", () => {
    expect(
      issuesOf(
        withRetry(
          "max_attempts: 0",
          "initial_interval: soon",
          "backoff: 0.5",
          "non_retryable: [Permission Error, 3]",
          "jitter: true",
        ),
      ),
    ).toEqual([
      "8 triggers[0].retry.max_attempts: max_attempts must be from 1 to 1000",
      "9 triggers[0].retry.initial_interval: expected number",
      "10 triggers[0].retry.backoff: backoff must be from 1 to 100",
      '11 triggers[0].retry.non_retryable[0]: "Permission Error" is not an exception\'s name: write its class, as PermissionError or requests.exceptions.HTTPError',
      "11 triggers[0].retry.non_retryable[1]: expected string",
      "12 triggers[0].retry.jitter: unknown key (expected one of: max_attempts, initial_interval, backoff, max_interval, non_retryable)",
    ]);
    expect(issuesOf(withRetry("initial_interval: 10", "max_interval: 5"))).toEqual([
      "9 triggers[0].retry.max_interval: max_interval must not be below initial_interval",
    ]);
    expect(issuesOf(withRetry("max_attempts: 2.5"))).toEqual([
      "8 triggers[0].retry.max_attempts: max_attempts must be a whole number",
    ]);
  });

  it("is a change a redeploy makes (will update)", () => {
    const before = parseManifest(withRetry("max_attempts: 3"));
    const deployed = {
      project: {
        id: "prj_1",
        name: "p",
        env_id: "env_1",
        active_deployment_id: null,
        created_at: "",
        updated_at: "",
      },
      env: { id: "env_1", project_id: "prj_1", name: "default" as const, created_at: "" },
      vars: [],
      triggers: before.triggers.map((t) => ({
        ...t,
        id: "trg_1",
        project_id: "prj_1",
        webhook_id: "w",
        pickle_values: true,
        retry: t.retry ?? undefined,
        schedule: undefined,
        timezone: undefined,
        connection: undefined,
        created_at: "",
        updated_at: "",
      })),
    };
    const action = (m: ReturnType<typeof parseManifest>) =>
      planDeploy(deployed, m, (s) => s).find((c) => c.kind === "trigger")?.action;
    expect(action(before)).toBe("keep");
    expect(action(parseManifest(withRetry("max_attempts: 4")))).toBe("update");
  });
});
