import { describe, expect, it } from "vitest";
import { ERROR_CODES, HooklineError } from "../errors.ts";
import { refusal } from "./python-errors.ts";

describe("refusal", () => {
  it("maps each kind of failure to the exception the workflow raises", () => {
    const raised = (code: (typeof ERROR_CODES)[number]) =>
      refusal(new HooklineError(code, "x")).error;
    expect(raised("not_found")).toBe("ValueError");
    expect(raised("bad_request")).toBe("ValueError");
    expect(raised("unprocessable")).toBe("ValueError");
    expect(raised("conflict")).toBe("ValueError");
    expect(raised("wrong_type")).toBe("TypeError");
    expect(raised("too_large")).toBe("AutoKittehError");
    expect(raised("timeout")).toBe("TimeoutError");
    expect(raised("unavailable")).toBe("RuntimeError");
    expect(raised("internal")).toBe("RuntimeError");
    for (const code of ERROR_CODES) expect(raised(code)).toMatch(/^[A-Z]\w+Error$/);
  });

  it("is a RuntimeError with the message for anything that is not a coded error", () => {
    expect(refusal(new Error("boom"))).toEqual({
      ok: false,
      error: "RuntimeError",
      message: "boom",
    });
    expect(refusal("plain")).toEqual({ ok: false, error: "RuntimeError", message: "plain" });
  });
});
