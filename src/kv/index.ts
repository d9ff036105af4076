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
  type SdkReply,
  storePublicUrl,
} from "./sdk-requests.ts";
export { StoreError, type Wire } from "./values.ts";
