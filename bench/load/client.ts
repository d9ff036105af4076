/**
 * The load client's process: runs one `LoadSpec` per message from its parent and answers with the
 * `LoadResult`. It exits when the IPC channel closes, so it never outlives the bench.
 */
import { type LoadSpec, runLoad } from "./generator.ts";

interface Command {
  id: number;
  spec: LoadSpec;
}

if (!process.send) throw new Error("bench/load/client.ts runs as a child with an IPC channel");

process.on("message", (msg: Command) => {
  runLoad(msg.spec).then(
    (result) => process.send!({ id: msg.id, result }),
    (err: unknown) => process.send!({ id: msg.id, error: String(err) }),
  );
});
process.on("disconnect", () => process.exit(0));
process.send({ ready: true });
