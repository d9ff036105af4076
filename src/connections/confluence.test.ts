import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import { confluenceEventType, verifyConfluence } from "./confluence.ts";

const signedReq = (suffix: string, secret: string, body: unknown) => {
  const bytes = new TextEncoder().encode(JSON.stringify(body));
  const mac = createHmac("sha256", secret).update(bytes).digest("hex");
  const headers = new Headers({
    "content-type": "application/json",
    "x-hub-signature": `sha256=${mac}`,
  });
  return { method: "POST", headers, body: bytes, now: Date.now(), suffix };
};
const vars = (set: Record<string, string>) => (n: string) => set[n];

describe("confluenceEventType", () => {
  it("names the entity and the category as AutoKitteh does", () => {
    expect(confluenceEventType({ page: {} }, "trashed")).toBe("page_trashed");
    expect(confluenceEventType({ blueprint_page: {} }, "created")).toBe("blueprint_page_created");
    expect(confluenceEventType({ attachments: [] }, "removed")).toBe("attachment_removed");
    expect(confluenceEventType({ relationData: {} }, "deleted")).toBe("relation_deleted");
    expect(confluenceEventType({ type: "contentUpdate" }, "updated")).toBe("content_updated");
    expect(confluenceEventType({ timestamp: 1 }, "updated")).toBeNull();
  });
});

describe("verifyConfluence", () => {
  it("takes a delivery signed with its category's secret", () => {
    const v = verifyConfluence(
      signedReq("moved", "m", { page: { id: 1 } }),
      vars({ WebhookSecret_moved: "m" }),
    );
    expect(v).toMatchObject({ kind: "events", events: [{ event_type: "page_moved" }] });
  });
  it("refuses another category's secret (401), no secret (403), an unknown category (400)", () => {
    const secrets = vars({ WebhookSecret_moved: "m", WebhookSecret_created: "c" });
    expect(verifyConfluence(signedReq("moved", "c", { page: {} }), secrets)).toMatchObject({
      status: 401,
    });
    expect(verifyConfluence(signedReq("moved", "m", { page: {} }), vars({}))).toMatchObject({
      status: 403,
    });
    expect(verifyConfluence(signedReq("nope", "m", { page: {} }), secrets)).toMatchObject({
      status: 400,
    });
  });
});
