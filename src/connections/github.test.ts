import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import { githubEvents, slashCommands, verifyGithub } from "./github.ts";
import type { InboundRequest } from "./verdict.ts";

// GitHub's documentation ("Validating webhook deliveries") signs "Hello, World!" with this secret.
const DOC_SECRET = "It's a Secret to Everybody";
const DOC_SIGNATURE = "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17";

const req = (body: string, headers: Record<string, string>): InboundRequest => ({
  method: "POST",
  headers: new Headers(headers),
  body: Buffer.from(body),
  now: Date.now(),
});
const vars = (values: Record<string, string>) => (name: string) => values[name];

describe("github: signatures", () => {
  it("checks the documentation's example signature, and nothing else", () => {
    const good = verifyGithub(
      req("Hello, World!", { "x-hub-signature-256": DOC_SIGNATURE, "content-type": "text/plain" }),
      vars({ pat_secret: DOC_SECRET }),
    );
    // The signature passes; the body then is no JSON: refused for that, not for the signature.
    expect(good).toMatchObject({ kind: "refuse", status: 400 });
    const wrongSecret = verifyGithub(
      req("Hello, World!", { "x-hub-signature-256": DOC_SIGNATURE }),
      vars({ pat_secret: `${DOC_SECRET}!` }),
    );
    expect(wrongSecret).toMatchObject({ kind: "refuse", status: 401 });
    const tampered = verifyGithub(
      req("Hello, World?", { "x-hub-signature-256": DOC_SIGNATURE }),
      vars({ webhook_secret: DOC_SECRET }),
    );
    expect(tampered).toMatchObject({
      kind: "refuse",
      status: 401,
      detail: expect.stringMatching(/does not match/),
    });
  });

  it("compares the whole signature: one that differs only in its last digit, or stops short, is refused", () => {
    const check = (signature: string) =>
      verifyGithub(
        req("Hello, World!", { "x-hub-signature-256": signature, "content-type": "text/plain" }),
        vars({ pat_secret: DOC_SECRET }),
      );
    const last = DOC_SIGNATURE.at(-1) === "0" ? "1" : "0";
    const nearMisses = {
      "the last digit changed": DOC_SIGNATURE.slice(0, -1) + last,
      "a middle digit changed": `${DOC_SIGNATURE.slice(0, 40)}${DOC_SIGNATURE[40] === "0" ? "1" : "0"}${DOC_SIGNATURE.slice(41)}`,
      "cut to its first half": DOC_SIGNATURE.slice(0, 39),
      "one digit too many": `${DOC_SIGNATURE}0`,
      "the prefix alone": "sha256=",
    };
    for (const [what, signature] of Object.entries(nearMisses)) {
      expect(check(signature), `a signature with ${what} must be refused`).toMatchObject({
        kind: "refuse",
        status: 401,
        detail: "X-Hub-Signature-256 does not match the body",
      });
    }
    // The exact one passes the signature check (and is then refused for its body, not for it).
    expect(check(DOC_SIGNATURE)).toMatchObject({ kind: "refuse", status: 400 });
  });

  it("refuses every delivery when no secret is set, and one without the header", () => {
    const headers = { "x-hub-signature-256": DOC_SIGNATURE, "x-github-event": "push" };
    expect(verifyGithub(req("Hello, World!", headers), vars({ pat: "ghp_x" }))).toMatchObject({
      kind: "refuse",
      status: 403,
    });
    expect(
      verifyGithub(req("{}", { "x-github-event": "push" }), vars({ pat_secret: "s" })),
    ).toMatchObject({ kind: "refuse", status: 401, detail: "X-Hub-Signature-256 is missing" });
  });
});

describe("github: events", () => {
  const sign = (body: string) => `sha256=${createHmac("sha256", "s").update(body).digest("hex")}`;
  const deliver = (body: string, event: string, type = "application/json") =>
    verifyGithub(
      req(body, {
        "x-hub-signature-256": sign(body),
        "content-type": type,
        "x-github-event": event,
        "x-github-delivery": "d-1",
      }),
      vars({ webhook_secret: "s" }),
    );

  it("answers ping and stores nothing", () => {
    expect(deliver('{"zen":"Keep it simple."}', "ping")).toMatchObject({
      kind: "answer",
      status: 200,
    });
  });

  it("takes JSON and form bodies alike, with one slash_command event per command line", () => {
    const payload = {
      action: "created",
      comment: { body: "LGTM\n/deploy staging\n```\n/no\n```\n/retry" },
    };
    const json = deliver(JSON.stringify(payload), "issue_comment");
    const form = deliver(
      `payload=${encodeURIComponent(JSON.stringify(payload))}`,
      "issue_comment",
      "application/x-www-form-urlencoded",
    );
    expect(form).toEqual(json);
    if (json.kind !== "events") throw new Error("not accepted");
    expect(json.delivery).toBe("d-1");
    const commands = [
      { name: "deploy", args: ["staging"], raw: "/deploy staging" },
      { name: "retry", args: [], raw: "/retry" },
    ];
    const data = { ...payload, slash_commands: commands };
    expect(json.events).toEqual([
      { event_type: "issue_comment", data },
      // AutoKitteh's shape: the command, and the delivery's own data and event type.
      ...commands.map((command) => ({
        event_type: "slash_command",
        data: { command, actual_data: data, actual_event_type: "issue_comment" },
      })),
    ]);
  });

  it("reads the first 16 command lines of a text, as AutoKitteh does", () => {
    const body = Array.from({ length: 20 }, (_, i) => `/c${i}`).join("\n");
    const events = githubEvents("issue_comment", { comment: { body } });
    expect(events).toHaveLength(17);
    expect(events.at(-1)?.data).toMatchObject({ command: { name: "c15" } });
  });

  it("keeps other events' payloads as they are", () => {
    const v = deliver('{"ref":"refs/heads/main"}', "push");
    expect(v).toEqual({
      kind: "events",
      delivery: "d-1",
      events: [{ event_type: "push", data: { ref: "refs/heads/main" } }],
    });
  });

  it("refuses other content types, bodies that are not objects, and a missing event header", () => {
    expect(deliver("{}", "push", "text/plain")).toMatchObject({ kind: "refuse", status: 400 });
    expect(deliver("[1]", "push")).toMatchObject({ kind: "refuse", status: 400 });
    expect(deliver("{}", "")).toMatchObject({ kind: "refuse", status: 400 });
  });
});

describe("slashCommands (AutoKitteh's rule)", () => {
  it.each([
    ["", []],
    ["Please run /deploy to deploy", []],
    ["/", []],
    ["/   \n/\t\t", []],
    ["/run  arg1   arg2", [{ name: "run", args: ["arg1", "arg2"], raw: "/run  arg1   arg2" }]],
    [
      "/deploy production   \n/test  ",
      [
        { name: "deploy", args: ["production"], raw: "/deploy production" },
        { name: "test", args: [], raw: "/test" },
      ],
    ],
    [
      "```\n/first\n```\n/middle\n~~~\n/second\n~~~",
      [{ name: "middle", args: [], raw: "/middle" }],
    ],
  ])("%j", (md, expected) => {
    expect(slashCommands(md)).toEqual(expected);
  });
});
