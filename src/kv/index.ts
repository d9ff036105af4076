export {
  createProjectKv,
  DEFAULT_LIMITS,
  type ProjectKv,
  type StoreDoc,
  type StoreLimits,
} from "./project-kv.ts";
export {
  handleSdkRequest,
  type SdkContext,
  storePublicUrl,
} from "./sdk-requests.ts";
export type { Wire } from "./values.ts";
