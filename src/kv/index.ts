export {
  createProjectStore,
  DEFAULT_LIMITS,
  type ProjectStore,
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
