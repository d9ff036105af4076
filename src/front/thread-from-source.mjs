// The front door's thread where the service runs from its TypeScript sources (the tests start it
// so): tsx's loader is registered in this thread, which does not inherit the parent's, before
// the thread's module is imported. The compiled service starts dist/src/front/thread.js instead.
import { register } from "tsx/esm/api";

register();
await import("./thread.ts");
