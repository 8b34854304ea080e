import { memoryAdapters } from "@petstore/adapters/memory";
import { createPetstore, issueApiKey } from "@petstore/core";
import { getRequestListener } from "@hono/node-server";
import express from "express";

const adapters = memoryAdapters();
// Mounted under /api/petstore: its Location and Link headers are built under that path.
const petstore = createPetstore({ ...adapters, basePath: "/api/petstore" });
const { key } = await issueApiKey(adapters.keys, { plan: "free" });

// The bridge from Node's (req, res) to the Pet Store's fetch handler.
const toPetstore = getRequestListener((request, { incoming }) => {
  // A body parser that ran first (express.json() on this path) has read the body: the Pet
  // Store is then handed the request as already read, which it answers as the host's bug it
  // is (a 500, logged), instead of taking the empty stream for a client that stopped sending.
  if (incoming.readableEnded && request.body !== null) void request.body.cancel();
  // The client address names the rate-limit bucket of callers without a valid key.
  return petstore.fetch(request, { clientAddress: incoming.socket.remoteAddress });
});

const app = express();
// The app's own routes, with the body parser they need.
app.get("/health", (_req, res) => void res.json({ ok: true }));
app.post("/api/echo", express.json(), (req, res) => void res.json(req.body));
// Express strips the mount path from req.url; the Pet Store needs the full path (originalUrl).
app.use("/api/petstore", (req, res) => {
  req.url = req.originalUrl;
  void toPetstore(req, res);
});

const server = app.listen(Number(process.env.PORT ?? 3000), "127.0.0.1", () => {
  const url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  console.log(`Pet Store on ${url}/api/petstore`);
  console.log(`curl -H "Authorization: Bearer ${key}" ${url}/api/petstore/pets`);
});
