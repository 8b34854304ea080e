import { createClient } from "@libsql/client";
import { generateApiKey } from "@petstore/core";
import { petstoreWorker } from "./worker.js";

// Plays the Workers platform on this machine: bindings in `env`, the client's address in
// CF-Connecting-IP (overwriting whatever the client sent, as Cloudflare's edge does). No libSQL
// server here: the worker's adapters get a client on a local file instead, the same code path
// (every statement through the client, as with a remote server).
const worker = petstoreWorker((env) => createClient({ url: env.LIBSQL_URL }));
const env = {
  LIBSQL_URL: process.env.LIBSQL_URL ?? "file:worker.db",
  PETSTORE_API_KEY: process.env.PETSTORE_API_KEY ?? generateApiKey(),
};

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
