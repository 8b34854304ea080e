// Runs in a project that installed the packed tarballs (see ../packages.test.ts), under Node,
// Bun or Deno: mounts the Pet Store on node:http through @hono/node-server (argument
// "node:http", Node's default) or the runtime's own server ("native": Bun.serve, Deno.serve),
// in memory and on a libSQL file, makes authenticated requests over the socket and prints
// what it saw as one JSON line.
import { createServer } from "node:http";
import process from "node:process";
import { getRequestListener } from "@hono/node-server";
import { libsqlAdapters, migrateLibsql } from "@petstore/adapters/libsql";
import { connectLibsql } from "@petstore/adapters/libsql/connect";
import { memoryAdapters } from "@petstore/adapters/memory";
import { createPetstore, issueApiKey } from "@petstore/core";

const runtime = globalThis.Deno ? "deno" : globalThis.Bun ? "bun" : "node";
const mount = process.argv[2] ?? (runtime === "node" ? "node:http" : "native");

/** Listens on 127.0.0.1 with a free port. */
async function listen(petstore) {
  if (mount === "native" && runtime === "deno") {
    const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (request, info) =>
      petstore.fetch(request, { clientAddress: info.remoteAddr.hostname }),
    );
    return { url: `http://127.0.0.1:${server.addr.port}`, close: () => server.shutdown() };
  }
  if (mount === "native" && runtime === "bun") {
    const server = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      fetch: (request, s) => petstore.fetch(request, { clientAddress: s.requestIP(request)?.address }),
    });
    return { url: `http://127.0.0.1:${server.port}`, close: () => server.stop(true) };
  }
  const server = createServer(
    getRequestListener((request, { incoming }) =>
      petstore.fetch(request, { clientAddress: incoming.socket.remoteAddress }),
    ),
  );
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

async function exercise(adapters) {
  const { key } = await issueApiKey(adapters.keys, { plan: "free" });
  const server = await listen(createPetstore(adapters));
  const auth = { authorization: `Bearer ${key}` };
  const requests = [
    ["GET", "/v1/pets", {}],
    [
      "POST",
      "/v1/pets",
      { ...auth, "content-type": "application/json" },
      JSON.stringify({ name: "Rex", categoryId: 1 }),
    ],
    ["GET", "/v1/pets", auth],
  ];
  const seen = [];
  for (const [method, path, headers, body] of requests) {
    const response = await fetch(server.url + path, { method, headers, body });
    const h = (name) => response.headers.get(name);
    seen.push({
      status: response.status,
      body: await response.json(),
      limit: h("x-ratelimit-limit"),
      remaining: h("x-ratelimit-remaining"),
      reset: Number(h("x-ratelimit-reset")),
    });
  }
  await server.close();
  return seen;
}

const db = await connectLibsql({ url: `file:${runtime}-${mount.replace(":", "-")}.db` });
await migrateLibsql(db);
const result = { runtime, mount, memory: await exercise(memoryAdapters()), libsql: await exercise(libsqlAdapters(db)) };
db.close();
console.log(JSON.stringify(result));
process.exit(0);
