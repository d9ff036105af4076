import { describe, expect, it } from "vitest";
import { issuesOf, lines } from "../../test/support/manifest.ts";
import { parseManifest } from "./index.ts";

/** Schedule and connection triggers, connections and var values, as parseManifest reads them. */

describe("parseManifest: schedules, connections, var values", () => {
  it("takes a var's number, boolean or empty value as its text, as AutoKitteh does", () => {
    const m = parseManifest(
      lines(
        "version: v1",
        "project:",
        "  name: p",
        "  vars:",
        "    - {name: A, value: 120}",
        "    - {name: B, value: true}",
        "    - name: C",
        "      value:",
        "    - {name: D, value: 1.50}",
        "    - {name: E}",
      ),
    );
    expect(m.vars.map((x) => [x.name, x.value])).toEqual([
      ["A", "120"],
      ["B", "true"],
      ["C", ""],
      ["D", "1.50"],
      ["E", ""],
    ]);
  });

  it("reads schedule and connection triggers in both layouts, UTC unless a timezone is set", () => {
    for (const nested of [true, false]) {
      const pad = nested ? "  " : "";
      const m = parseManifest(
        lines(
          "version: v1",
          "project:",
          "  name: p",
          `${pad}connections:`,
          `${pad}  - {name: slack, integration: slack}`,
          `${pad}triggers:`,
          `${pad}  - {name: tick, schedule: "@every 15m", call: a.py:f}`,
          `${pad}  - {name: night, type: schedule, schedule: "0 3 * * *", timezone: Europe/Paris}`,
          `${pad}  - {name: msg, connection: slack, event_type: message, call: a.py:f}`,
        ),
      );
      expect(
        m.triggers.map((t) => [t.type, t.schedule, t.timezone, t.connection, t.event_type]),
      ).toEqual([
        ["schedule", "@every 15m", "UTC", null, ""],
        ["schedule", "0 3 * * *", "Europe/Paris", null, ""],
        ["connection", null, null, "slack", "message"],
      ]);
      expect(m.connections).toEqual([{ name: "slack", integration: "slack", vars: [] }]);
    }
  });

  it("checks schedule and connection triggers, and connections in one layout", () => {
    expect(
      issuesOf(
        lines(
          "version: v1",
          "project:",
          "  name: p",
          "  connections:",
          "    - name: slack",
          "      integration: slack",
          "  triggers:",
          "    - name: every_minute",
          "      schedule: '* * *'",
          "    - name: typed",
          "      type: schedule",
          "    - name: conn",
          "      connection: slack",
          "      timezone: UTC",
          "    - name: zone",
          "      schedule: '@daily'",
          "      timezone: Mars/Olympus",
          "      is_sync: true",
          "      call: a.py:f",
          "    - name: both",
          "      schedule: '@every 1m'",
          "      webhook: {}",
          "    - name: every",
          "      schedule: '@every 500ms'",
          "connections: []",
        ),
      ),
    ).toEqual([
      "5 project.connections: connections given both at the top level and under project: keep one",
      '9 project.triggers[0].schedule: "* * *" is not a schedule: give five cron fields (minute hour day month weekday), a descriptor such as @daily, or @every <duration>',
      "11 project.triggers[1].type: type: schedule needs schedule: <cron>, and type: connection needs connection: <name>",
      "14 project.triggers[2].timezone: timezone is only for schedule triggers",
      '17 project.triggers[3].timezone: unknown timezone "Mars/Olympus" (use an IANA name such as UTC or Europe/Paris)',
      "18 project.triggers[3].is_sync: is_sync is only for webhook triggers: nothing waits for a schedule's or connection's answer",
      "20 project.triggers[4].type: give one of type: webhook / webhook: {}, schedule: or connection:, not several",
      '24 project.triggers[5].schedule: "@every 500ms": @every takes a duration such as 15m, 1h30m or 10s',
    ]);
  });

  it("wants a trigger's connection declared under connections, in either layout", () => {
    expect(
      issuesOf(
        lines(
          "version: v1",
          "project:",
          "  name: p",
          "  triggers:",
          "    - {name: a, connection: nope}",
          "connections:",
          "  - {name: slack}",
        ),
      ),
    ).toEqual([
      '5 project.triggers[0].connection: connection "nope" is not declared under connections',
    ]);
    expect(
      issuesOf(
        lines("version: v2", "project: {name: p}", "triggers:", "  - {name: a, connection: nope}"),
      ),
    ).toEqual(['4 triggers[0].connection: connection "nope" is not declared under connections']);
  });

  it("deploys a connection's vars as <connection>__<var>, in both layouts", () => {
    for (const [version, pad, head] of [
      ["v1", "  ", ["project:", "  name: p"]],
      ["v2", "", ["project: {name: p}"]],
    ] as const) {
      const m = parseManifest(
        lines(
          `version: ${version}`,
          ...head,
          `${pad}vars:`,
          `${pad}  - {name: A, value: a}`,
          `${pad}connections:`,
          `${pad}  - name: gh`,
          `${pad}    integration: github`,
          `${pad}    vars:`,
          `${pad}      - {name: pat, value: ghp_1, secret: true}`,
          `${pad}      - {name: enterprise_url, value: 8080}`,
        ),
      );
      expect(m.vars).toEqual([
        { name: "A", value: "a", secret: false, description: "" },
        { name: "gh__pat", value: "ghp_1", secret: true, description: "" },
        { name: "gh__enterprise_url", value: "8080", secret: false, description: "" },
      ]);
      expect(m.connections[0]).toMatchObject({ name: "gh", integration: "github" });
    }
  });

  it("names file, line and path of a bad connection or connection var", () => {
    expect(
      issuesOf(
        lines(
          "version: v2",
          "project: {name: p}",
          "vars:",
          "  - {name: gh__pat, value: x}",
          "connections:",
          "  - name: gh",
          "    integration: github",
          "    vars:",
          "      - {name: pat, value: y}",
          "      - {name: bad-name}",
          "      - {name: ok, colour: red}",
          "  - {name: my-conn, integration: http}",
          "  - {name: n, integration: 7}",
          "triggers:",
          "  - {name: gh, type: webhook}",
        ),
      ),
    ).toEqual([
      '9 connections[0].vars[0].name: var "gh__pat" is set twice (under vars: or this connection)',
      '10 connections[0].vars[1].name: "bad-name" is not a valid variable name: use letters, digits and "_"',
      "11 connections[0].vars[2].colour: unknown key (expected one of: name, description, value, secret)",
      '12 connections[1].name: "my-conn": a connection\'s name prefixes env vars (<name>__<var>): no "-"',
      "13 connections[2].integration: expected string",
      '15 triggers[0].name: "gh" names a connection too: subscribe("gh") could not tell them apart',
    ]);
  });
});
