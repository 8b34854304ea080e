import { createServer } from "node:http";
import { memoryAdapters } from "@petstore/adapters/memory";
import { createPetstore, issueApiKey } from "@petstore/core";
import { getRequestListener } from "@hono/node-server";

const adapters = memoryAdapters();
const petstore = createPetstore(adapters);
const { key } = await issueApiKey(adapters.keys, { plan: "free" });

// getRequestListener turns Node's (req, res) into a web Request and writes the Response back.
const server = createServer(
  getRequestListener((request, { incoming }) =>
    // The client address names the rate-limit bucket of callers without a valid key.
    petstore.fetch(request, { clientAddress: incoming.socket.remoteAddress }),
  ),
);

server.listen(Number(process.env.PORT ?? 3000), "127.0.0.1", () => {
  const url = `http://127.0.0.1:${(server.address() as { port: number }).port}/`;
  console.log(`Pet Store on ${url}v1`);
  console.log(`curl -H "Authorization: Bearer ${key}" ${url}v1/pets`);
});
