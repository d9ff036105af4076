import { describe, expect, it } from "vitest";
import { installableApp } from "./github-install.ts";

const varsOf = (o: Record<string, string>) => (n: string) => o[n];

describe("installableApp", () => {
  it("the connection's own App: its app_name on github.com, or on the web URL setting", () => {
    const own = varsOf({ app_id: "12", app_name: "my-app", private_key: "PEM" });
    expect(installableApp(own, {})).toEqual({
      name: "my-app",
      own: true,
      installUrl: "https://github.com/apps/my-app/installations/new",
    });
    const web = { SVC_OAUTH_GITHUB_WEB_URL: "http://127.0.0.1:9/" };
    expect(installableApp(own, web)?.installUrl).toBe(
      "http://127.0.0.1:9/apps/my-app/installations/new",
    );
  });

  it("the service's App, on GHES under github-apps/", () => {
    const env = {
      SVC_GITHUB_APP_ID: "7",
      SVC_GITHUB_PRIVATE_KEY: "PEM",
      GITHUB_APP_NAME: "svc-app",
    };
    const vars = varsOf({ enterprise_url: "https://ghe.example.com/" });
    expect(installableApp(vars, env)).toEqual({
      name: "svc-app",
      own: false,
      installUrl: "https://ghe.example.com/github-apps/svc-app/installations/new",
    });
  });

  it("is null when the App's id, name or key is missing, or the name is no slug", () => {
    expect(installableApp(varsOf({ app_id: "12", private_key: "PEM" }), {})).toBeNull();
    expect(installableApp(varsOf({ app_name: "a", private_key: "PEM" }), {})).toBeNull();
    expect(installableApp(varsOf({ app_id: "12", app_name: "a" }), {})).toBeNull();
    const bad = varsOf({ app_id: "12", app_name: "a/../b", private_key: "PEM" });
    expect(installableApp(bad, {})).toBeNull();
  });
});
