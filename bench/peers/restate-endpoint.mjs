// Restate's side of the peer comparison: a service `bench` over the TypeScript SDK, the same
// work as our trivial handler (parse the JSON body, answer with it), plain and with one durable
// step. Run by bench/peers/restate.ts as `node restate-endpoint.mjs <sdk entry> <port>`.
import { pathToFileURL } from "node:url";

// The SDK calls Promise.withResolvers (Node 22); Node 20 lacks it.
Promise.withResolvers ??= function withResolvers() {
  let resolve;
  let reject;
  const promise = new this((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
};

const [sdkEntry, port] = process.argv.slice(2);
const restate = await import(pathToFileURL(sdkEntry).href);

const bench = restate.service({
  name: "bench",
  handlers: {
    echo: async (_ctx, input) => ({ ok: true, n: input?.n ?? null }),
    step: async (ctx, input) => {
      const n = await ctx.run("step", () => input?.n ?? null);
      return { ok: true, n };
    },
  },
});

await restate.endpoint().bind(bench).listen(Number(port));
process.stdout.write("listening\n");
