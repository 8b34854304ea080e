import { memoryAdapters } from "@petstore/adapters/memory";
import { createPetstore, issueApiKey } from "@petstore/core";
import { type HttpBindings, serve } from "@hono/node-server";
import { Hono } from "hono";

const adapters = memoryAdapters();
const petstore = createPetstore(adapters);
const { key } = await issueApiKey(adapters.keys, { plan: "free" });

// On Node, @hono/node-server hands Hono the request's `incoming` (node:http's IncomingMessage)
// as `env`: its socket knows the client's address.
const app = new Hono<{ Bindings: HttpBindings }>();

app.get("/", (c) => c.text("Welcome to the shop"));
app.get("/health", (c) => c.json({ ok: true }));

// The Pet Store gets the request unchanged, /v1 included, which is its default basePath.
// The client address names the rate-limit bucket of callers without a valid key.
app.all("/v1/*", (c) => petstore.fetch(c.req.raw, { clientAddress: c.env.incoming.socket.remoteAddress }));

serve({ fetch: app.fetch, hostname: "127.0.0.1", port: Number(process.env.PORT ?? 3000) }, ({ port }) => {
  console.log(`Shop on http://127.0.0.1:${port}/, Pet Store on http://127.0.0.1:${port}/v1`);
  console.log(`curl -H "Authorization: Bearer ${key}" http://127.0.0.1:${port}/v1/pets`);
});
