import { memoryAdapters } from "@petstore/adapters/memory";
import { createPetstore, issueApiKey } from "@petstore/core";

const adapters = memoryAdapters();
const petstore = createPetstore(adapters);
const { key } = await issueApiKey(adapters.keys, { plan: "free" });

const server = Bun.serve({
  hostname: "127.0.0.1",
  port: Number(process.env.PORT ?? 3000),
  // The client address names the rate-limit bucket of callers without a valid key.
  fetch: (request, server) => petstore.fetch(request, { clientAddress: server.requestIP(request)?.address }),
});

console.log(`Pet Store on ${server.url}v1`);
console.log(`curl -H "Authorization: Bearer ${key}" ${server.url}v1/pets`);
