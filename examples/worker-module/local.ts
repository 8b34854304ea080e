import { generateApiKey } from "@petstore/core";
import worker from "./worker.js";

// Plays the Workers platform on this machine: bindings in `env`, the client's address in
// CF-Connecting-IP (overwriting whatever the client sent, as Cloudflare's edge does).
const env = { PETSTORE_API_KEY: process.env.PETSTORE_API_KEY ?? generateApiKey() };

const server = Bun.serve({
  hostname: "127.0.0.1",
  port: Number(process.env.PORT ?? 8787),
  fetch(request, server) {
    request.headers.set("CF-Connecting-IP", server.requestIP(request)?.address ?? "unknown");
    return worker.fetch(request, env);
  },
});

console.log(`Worker on ${server.url}v1`);
console.log(`curl -H "Authorization: Bearer ${env.PETSTORE_API_KEY}" ${server.url}v1/pets`);
