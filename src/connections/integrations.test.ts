import { describe, expect, it } from "vitest";
import { connectionStatus, eventTypeMatches, statusText } from "./integrations.ts";

describe("connection statuses", () => {
  it("says which vars each event source still needs", () => {
    expect(connectionStatus("github", new Set())).toEqual({
      state: "needs",
      needs: ["pat_secret or webhook_secret", "pat or install_id"],
    });
    expect(connectionStatus("github", new Set(["webhook_secret", "pat"])).state).toBe("ready");
    // A GitHub App installation: its id instead of a token.
    expect(connectionStatus("github", new Set(["webhook_secret", "install_id"])).state).toBe(
      "ready",
    );
    expect(connectionStatus("slack", new Set(["private_signing_secret"])).state).toBe("ready");
    expect(connectionStatus("slack", new Set(["private_bot_token"])).needs).toEqual([
      "private_signing_secret or signing_secret",
    ]);
    expect(connectionStatus("http", new Set(["signing_secret"])).state).toBe("ready");
    expect(statusText(connectionStatus("linear", new Set()))).toBe("no inbound events (vars only)");
    expect(statusText(connectionStatus("http", new Set()))).toBe("needs auth or signing_secret");
  });
});

describe("connection triggers' event types", () => {
  it("match exactly, all with empty or *, Slack's message as message_posted, methods in any case", () => {
    expect(eventTypeMatches("github", "push", "push")).toBe(true);
    expect(eventTypeMatches("github", "push", "pull_request")).toBe(false);
    expect(eventTypeMatches("github", "", "star")).toBe(true);
    expect(eventTypeMatches("github", "*", "star")).toBe(true);
    expect(eventTypeMatches("slack", "message_posted", "message")).toBe(true);
    expect(eventTypeMatches("slack", "message_posted", "app_mention")).toBe(false);
    expect(eventTypeMatches("github", "message_posted", "message")).toBe(false);
    expect(eventTypeMatches("http", "POST", "post")).toBe(true);
    expect(eventTypeMatches("github", "Push", "push")).toBe(false);
  });
});
