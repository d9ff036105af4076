import * as v from "valibot";
import { defineRoute } from "../validate.ts";

/**
 * The project store's routes, spread into the route table (contract.ts). Values are in the SDK's
 * wire form (python-runtime/workflow_sdk/values.py): JSON, with `{"$int": "…"}` for an int past
 * ±(2^53-1), `{"$float": …}`, `{"$bytes": b64}`, `{"$pickle": b64}` for what JSON would lose.
 */
const project = v.pipe(v.string(), v.description("prj_…: an id or a project name"));
const key = v.pipe(v.string(), v.description("the key (URL-encoded), 1 to 256 characters"));
const value = v.pipe(v.unknown(), v.description("the value in the SDK's wire form"));

export const StoreValue = v.strictObject({
  project_id: v.string(),
  key: v.string(),
  value,
  published: v.boolean(),
});

const json = (description: string, schema: v.GenericSchema) => ({ 200: { description, schema } });

export const storeApi = {
  storeKeys: defineRoute({
    method: "get",
    path: "/projects/{project}/store",
    summary: "List the keys of a project's store",
    params: v.object({ project }),
    ok: json(
      "The keys, sorted",
      v.strictObject({ project_id: v.string(), keys: v.array(v.string()) }),
    ),
    errors: [404],
  }),
  storeGet: defineRoute({
    method: "get",
    path: "/projects/{project}/store/{key}",
    summary: "One value of a project's store",
    params: v.object({ project, key }),
    ok: json("The value", StoreValue),
    errors: [400, 404],
  }),
  storeSet: defineRoute({
    method: "put",
    path: "/projects/{project}/store/{key}",
    summary: "Set a value in a project's store (limits: 64 KiB a value, 1 MiB a project)",
    params: v.object({ project, key }),
    body: v.object({
      value: v.pipe(
        v.unknown(),
        v.check((x) => x !== undefined, "required"),
      ),
    }),
    ok: json("The value as stored", StoreValue),
    errors: [400, 404, 413],
  }),
  storeDelete: defineRoute({
    method: "delete",
    path: "/projects/{project}/store/{key}",
    summary: "Delete a value from a project's store (absent: no error)",
    params: v.object({ project, key }),
    ok: { 204: { description: "Deleted" } },
    errors: [400, 404],
  }),
};
