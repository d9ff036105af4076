import { Hono } from "hono";
import { describe, expect, it } from "vitest";
import { requestOrigin } from "./forwarded.ts";

const app = new Hono().get("/o", (c) => c.text(requestOrigin(c)));
const origin = async (headers: Record<string, string>) =>
  (await app.request("http://10.0.0.5:8080/o", { headers })).text();

describe("requestOrigin", () => {
  it("is the request's own origin without forwarded headers", async () => {
    expect(await origin({})).toBe("http://10.0.0.5:8080");
  });

  it("takes X-Forwarded-Proto and X-Forwarded-Host, the first of a chain", async () => {
    const headers = { "x-forwarded-proto": "https", "x-forwarded-host": "hooks.example.com, lb" };
    expect(await origin(headers)).toBe("https://hooks.example.com");
    expect(await origin({ "x-forwarded-host": "hooks.example.com:8443" })).toBe(
      "http://hooks.example.com:8443",
    );
  });

  it("prefers RFC 7239 Forwarded", async () => {
    const headers = {
      forwarded: 'for=1.2.3.4;proto=https;host="a.example", for=5.6.7.8',
      "x-forwarded-host": "b.example",
    };
    expect(await origin(headers)).toBe("https://a.example");
  });

  it("ignores a scheme or a host that is not one", async () => {
    const headers = { "x-forwarded-proto": "javascript", "x-forwarded-host": "evil/x?y" };
    expect(await origin(headers)).toBe("http://10.0.0.5:8080");
  });
});
