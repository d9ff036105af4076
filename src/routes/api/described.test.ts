import { describe, expect, it } from "vitest";
import { deployBody, targets } from "../../../test/support/app.ts";
import { fakeRuntime } from "../../../test/support/fake-runtime.ts";

/**
 * AutoKitteh's `project.display_name` and `vars[].description` (a project's vars and a
 * connection's) through a deploy: stored, shown by the API, kept by `cli var set`'s route, and
 * changed by a redeploy that changes them.
 */
const MANIFEST = (display: string, about: string) => `version: v1
project:
  name: described
  display_name: ${display}
  vars:
    - name: CHANNEL
      description: ${about}
      value: general
    - name: PLAIN
      value: x
  connections:
    - name: jira_conn
      integration: jira
      vars:
        - name: BaseURL
          description: your Atlassian site
          value: https://example.atlassian.net
`;

type Var = { name: string; value: string; description: string; source: string };

for (const target of targets) {
  describe(`descriptions and display names (${target.name})`, () => {
    it("stores them, shows them, and keeps a description when cli var set changes a value", async () => {
      const { fetch } = await target.make(fakeRuntime({}).runtime);
      const deploy = async (display: string, about: string) => {
        const res = await fetch("/api/v1/deploy", deployBody(MANIFEST(display, about)));
        expect(res.status).toBe(200);
        return (await res.json()) as { lines: string[] };
      };
      const vars = async () =>
        ((await (await fetch("/api/v1/envs/described/vars")).json()) as { vars: Var[] }).vars;
      const project = async () =>
        ((await (await fetch("/api/v1/projects/described")).json()) as { project: object }).project;

      await deploy("Described Project", "where to post");
      expect(await project()).toMatchObject({
        name: "described",
        display_name: "Described Project",
        manifest_version: "v1",
      });
      const first = await vars();
      const about = (name: string, list: Var[]) => list.find((x) => x.name === name)?.description;
      expect(about("CHANNEL", first)).toBe("where to post");
      expect(about("PLAIN", first)).toBe("");
      expect(about("jira_conn__BaseURL", first)).toBe("your Atlassian site");

      const put = await fetch("/api/v1/envs/described/vars/CHANNEL", {
        method: "PUT",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ value: "ops" }),
      });
      expect(((await put.json()) as { var: Var }).var).toMatchObject({
        value: "ops",
        source: "cli",
        description: "where to post",
      });

      const again = await deploy("Renamed", "where alerts go");
      expect(again.lines).toContain('[plan] project "described": found, will update');
      expect(again.lines).toContain('[plan] var "described/CHANNEL": found, will update');
      expect(again.lines.some((l) => l.startsWith('[exec] update_project "described"'))).toBe(true);
      expect(await project()).toMatchObject({ display_name: "Renamed" });
      // The value set with cli var set stays; the manifest's new description is taken.
      expect((await vars()).find((x) => x.name === "CHANNEL")).toMatchObject({
        value: "ops",
        source: "cli",
        description: "where alerts go",
      });
      const same = await deploy("Renamed", "where alerts go");
      expect(same.lines).toContain('[plan] project "described": found, no changes needed');
      expect(same.lines).toContain('[plan] var "described/CHANNEL": found, no changes needed');
    });
  });
}
