import { memoryAdapters } from "@petstore/adapters/memory";
import { createPetstore, issueApiKey } from "@petstore/core";
import { AutoRouter, type IRequest, text } from "itty-router";

const adapters = memoryAdapters();
const petstore = createPetstore(adapters);
const { key } = await issueApiKey(adapters.keys, { plan: "free" });

const router = AutoRouter();

router
  .get("/", () => text("Welcome to the shop"))
  .get("/health", () => ({ ok: true }))
  // The Pet Store sees the full path, /v1 included, which is its default basePath.
  .all("/v1/*", (request: IRequest, clientAddress?: string) => petstore.fetch(request, { clientAddress }));

const server = Bun.serve({
  hostname: "127.0.0.1",
  port: Number(process.env.PORT ?? 3000),
  // itty passes the arguments after the request on to every handler: here the socket address.
  fetch: (request, server) => router.fetch(request, server.requestIP(request)?.address),
});

console.log(`Shop on ${server.url}, Pet Store on ${server.url}v1`);
console.log(`curl -H "Authorization: Bearer ${key}" ${server.url}v1/pets`);
