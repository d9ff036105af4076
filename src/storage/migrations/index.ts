export { MIGRATIONS, type Migration } from "./list.ts";
