import * as v from "valibot";
import { ManualRunFields } from "../../sessions/manual.ts";
import { defineRoute } from "../validate.ts";
import { Session } from "./schemas.ts";

/** The manual run's route, spread into the route table (contract.ts). */
export const runApi = {
  startSession: defineRoute({
    method: "post",
    path: "/projects/{project}/sessions",
    summary:
      "Start a session by hand (AutoKitteh's `ak session start`): an entry point of the active deployment, inputs as its event.data; asynchronous (503 when too many sessions wait)",
    params: v.object({
      project: v.pipe(v.string(), v.description("prj_…: an id or a project name")),
    }),
    body: ManualRunFields,
    ok: {
      201: {
        description: "The new session, created",
        schema: v.strictObject({ session: Session }),
      },
    },
    errors: [400, 404, 409],
  }),
};
