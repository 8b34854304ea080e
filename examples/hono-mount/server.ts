import { memoryAdapters } from "@petstore/adapters/memory";
import { createPetstore, issueApiKey } from "@petstore/core";
import type { Server } from "bun";
import { Hono } from "hono";

const adapters = memoryAdapters();
const petstore = createPetstore(adapters);
const { key } = await issueApiKey(adapters.keys, { plan: "free" });

// Bun.serve hands its server to Hono as `env`; it knows each request's socket address.
const app = new Hono<{ Bindings: Server<undefined> }>();

app.get("/", (c) => c.text("Welcome to the shop"));
app.get("/health", (c) => c.json({ ok: true }));

// The Pet Store gets the request unchanged, /v1 included, which is its default basePath.
// (Hono's app.mount("/v1", ...) would strip /v1 before the Pet Store saw the request, and its
// Location and Link headers would then lack it: pass the request unchanged, as here.)
app.all("/v1/*", (c) => petstore.fetch(c.req.raw, { clientAddress: c.env.requestIP(c.req.raw)?.address }));

const server = Bun.serve({
  hostname: "127.0.0.1",
  port: Number(process.env.PORT ?? 3000),
  fetch: app.fetch,
});

console.log(`Shop on ${server.url}, Pet Store on ${server.url}v1`);
console.log(`curl -H "Authorization: Bearer ${key}" ${server.url}v1/pets`);
