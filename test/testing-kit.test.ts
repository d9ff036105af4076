import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { buildWebhookData } from "../src/events/data.ts";
import { repoRoot } from "./support/python.ts";

/**
 * `workflow_sdk.testing.event(...)` must build the same `data` as the service does for the same
 * request (docs/testing.md): each request below goes through buildWebhookData here and through
 * the kit in Python, and the two JSON shapes (body bytes as base64) must be equal.
 */
interface Request {
  method: string;
  /** Below the webhook URL, with any query string. */
  target: string;
  headers: [string, string][];
  body: Buffer;
}

const WEBHOOK_ID = "0000000000000000000000test"; // testing.WEBHOOK_ID
const FORM = "application/x-www-form-urlencoded";

const requests: Request[] = [
  { method: "POST", target: "", headers: [], body: Buffer.from("") },
  {
    method: "post",
    target: "/a b/é?x=1&x=2&y&&z=%zz+w",
    headers: [
      ["X-Tag", "a"],
      ["x-tag", " b "],
      ["x-hub-signature-256", "sha256=ab"],
      ["content-type", FORM],
    ],
    body: Buffer.from("a=1&b=x+y&a=%E2%82%AC&c&=v"),
  },
  {
    method: "PUT",
    target: "/",
    headers: [["Content-Type", "text/plain"]],
    body: Buffer.from(
      '{"n": 1.0, "big": 12345678901234567890, "inf": 1e400, "s": "\\ud800", "x": 0.1}',
    ),
  },
  {
    method: "POST",
    target: "/f",
    headers: [["content-type", `${FORM}; charset=utf-8`]],
    body: Buffer.from("?q=1&q=2"),
  },
  { method: "POST", target: "/bom", headers: [], body: Buffer.from("\ufeff[1, 2.5e3, -0]") },
  {
    method: "DELETE",
    target: "/bin?k=%20+v",
    headers: [["content-type", FORM]],
    body: Buffer.from([0xff, 0xfe]),
  },
  {
    method: "GET",
    target: "/s?q=a%20b&q=%E2%82%AC",
    headers: [["Accept", "*/*"]],
    body: Buffer.from(""),
  },
  { method: "PATCH", target: "/ws", headers: [], body: Buffer.from(" \n null \t") },
  { method: "GET", target: "/a/b/", headers: [], body: Buffer.from("") },
  { method: "GET", target: "//x", headers: [], body: Buffer.from("") },
];

function fromService(r: Request): unknown {
  const headers = new Headers();
  for (const [k, v] of r.headers) headers.append(k, v);
  const data = buildWebhookData({
    method: r.method,
    url: new URL(`http://h/webhooks/${WEBHOOK_ID}${r.target}`),
    headers,
    body: new Uint8Array(r.body),
    webhookPrefix: `/webhooks/${WEBHOOK_ID}`,
  });
  return JSON.parse(JSON.stringify(data)); // what the runner receives
}

const KIT = `
import base64, json, sys
from workflow_sdk import testing
from workflow_sdk.testing.events import to_wire
out = []
for r in json.load(sys.stdin):
    e = testing.event(r["method"], r["target"], headers=r["headers"], body=base64.b64decode(r["body"]))
    out.append(to_wire(e)["data"])
print(json.dumps(out))
`;

function fromKit(rs: Request[]): unknown[] {
  const input = JSON.stringify(rs.map((r) => ({ ...r, body: r.body.toString("base64") })));
  const env = { ...process.env, PYTHONPATH: join(repoRoot, "python-runtime") };
  return JSON.parse(execFileSync("python3", ["-c", KIT], { input, env, encoding: "utf8" }));
}

describe("workflow_sdk.testing.event", () => {
  it("builds the same event data as the webhook route", () => {
    const kit = fromKit(requests);
    requests.forEach((r, i) => {
      expect(kit[i], `${r.method} ${r.target}`).toEqual(fromService(r));
    });
  });
});
