import { describe, expect, it } from "vitest";
import { compileFilter, FilterError } from "./filter.ts";

const data = {
  method: "POST",
  raw_url: "/webhooks/abc/done?page=2",
  url: { path: "/webhooks/abc/done", query: { page: "2" }, path_suffix: "done" },
  headers: { "X-Kind": "a", "Content-Type": "application/json" },
  body: { bytes: "e30=", text: '{"kind":"x","n":3}', json: { kind: "x", n: 3 }, form: null },
};
const event = { data, event_type: "post" };

const matches = (expr: string, input = event) => compileFilter(expr).matches(input);
const refusal = (expr: string) => {
  try {
    compileFilter(expr);
  } catch (e) {
    expect(e).toBeInstanceOf(FilterError);
    return (e as FilterError).message;
  }
  throw new Error(`expected ${expr} to be refused`);
};

describe("compileFilter", () => {
  it("matches on data and event_type", () => {
    expect(matches('data.url.path.endsWith("/done")')).toBe(true);
    expect(matches('data.method == "POST"')).toBe(true);
    expect(matches('data.headers["X-Kind"] == "a"')).toBe(true);
    expect(matches('data.body.json.kind == "x"')).toBe(true);
    expect(matches("data.body.json.n > 2 && data.body.json.n == 3")).toBe(true);
    expect(matches('data.url.query.page == "2" && event_type == "post"')).toBe(true);
    expect(matches('data.headers.exists(h, h.startsWith("X-"))')).toBe(true);
    expect(matches('data.url.path.lowerAscii().contains("done")')).toBe(true);
    expect(matches("has(data.body.json.kind)")).toBe(true);
  });

  it("reads path_suffix without its leading slash, as docs/events.md shows", () => {
    const at = (suffix: string) => ({
      ...event,
      data: { ...data, url: { ...data.url, path_suffix: suffix } },
    });
    expect(matches('data.url.path_suffix == "done"')).toBe(true);
    expect(matches('data.url.path_suffix == "/done"')).toBe(false);
    expect(matches('data.url.path_suffix.startsWith("orders/")', at("orders/42"))).toBe(true);
    expect(matches('data.url.path_suffix.matches("^orders/[0-9]+$")', at("orders/42"))).toBe(true);
    expect(matches('data.url.path_suffix.matches("^orders/[0-9]+$")', at("orders/x"))).toBe(false);
  });

  it("does not match when the condition is false", () => {
    expect(matches('data.url.path.endsWith("/start")')).toBe(false);
    expect(matches('event_type == "get"')).toBe(false);
    expect(matches('data.body.json.kind in ["y", "z"]')).toBe(false);
  });

  it("reads header names in any case", () => {
    expect(matches('data.headers["x-kind"] == "a"')).toBe(true);
    expect(matches('data.headers["CONTENT-TYPE"].startsWith("application/json")')).toBe(true);
  });

  it("matches everything when empty", () => {
    expect(compileFilter("").matches(event)).toBe(true);
    expect(compileFilter("  ").matches({ data: null, event_type: "" })).toBe(true);
  });

  it("keeps its source", () => {
    expect(compileFilter('event_type == "post"').source).toBe('event_type == "post"');
  });

  it("gives false, not an error, when evaluation fails", () => {
    expect(matches("data.missing.field == 1")).toBe(false);
    expect(matches('data.headers["X-Absent"] == "a"')).toBe(false);
    expect(matches("data.body.json.n + 1 == 4")).toBe(false); // JSON numbers are doubles
    expect(matches("data.body.form.x == 1")).toBe(false);
    expect(matches("data.method == 1", { data: undefined as never, event_type: "" })).toBe(false);
  });

  it("gives false when a data-dependent result is not a bool", () => {
    expect(matches("data.url.path")).toBe(false);
  });

  it("accepts objects without a prototype", () => {
    const query = Object.assign(Object.create(null), { page: "2" });
    const input = { data: { ...data, url: { ...data.url, query } }, event_type: "post" };
    expect(matches('data.url.query.page == "2"', input)).toBe(true);
  });

  it("refuses bad syntax", () => {
    expect(refusal('data.url.path.endsWith("/done"')).toMatch(/^invalid filter: at 1:\d+: /);
    expect(refusal("data.(")).toMatch(/^invalid filter: /);
  });

  it("refuses expressions that cannot yield a bool", () => {
    expect(refusal("1 + 2")).toBe("filter must yield a bool, got int");
    expect(refusal('"post"')).toBe("filter must yield a bool, got string");
    expect(refusal("event_type")).toBe("filter must yield a bool, got string");
    expect(refusal("size(data.headers)")).toBe("filter must yield a bool, got int");
    expect(refusal("data.headers.map(h, h)")).toBe("filter must yield a bool, got list");
    expect(refusal('true ? "a" : "b"')).toBe("filter must yield a bool, got string");
    expect(refusal("data.url.path.lowerAscii()")).toBe("filter must yield a bool, got string");
  });

  it("refuses unknown variables and functions", () => {
    expect(refusal("request.method == 'POST'")).toBe(
      'unknown variable "request": a filter sees only data and event_type',
    );
    expect(refusal("data.url.path.glob('*')")).toBe('unknown function "glob"');
    expect(compileFilter("type(data) == map").matches(event)).toBe(true);
  });

  it("reuses a compiled filter for the same source", () => {
    expect(compileFilter('event_type == "put"')).toBe(compileFilter('event_type == "put"'));
  });

  it("drops the least recently used filters past 256", () => {
    const first = compileFilter('event_type == "first"');
    for (let i = 0; i < 256; i++) compileFilter(`event_type == "e${i}"`);
    expect(compileFilter('event_type == "first"')).not.toBe(first);
  });
});
