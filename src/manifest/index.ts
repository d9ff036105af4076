export { callProblem, normalizeCall } from "./call.ts";
export { formatIssue, ManifestError, type ManifestIssue } from "./error.ts";
export { TriggerName } from "./fields.ts";
export { parseManifest } from "./parse.ts";
export {
  type Manifest,
  ManifestSchema,
  type TriggerSpec,
  VarName,
  type VarSpec,
} from "./schema.ts";
