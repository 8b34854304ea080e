import { libsqlAdapters, migrateLibsql } from "@petstore/adapters/libsql";
import { connectLibsql } from "@petstore/adapters/libsql/connect";
import { createPetstore, issueApiKey } from "@petstore/core";

const db = await connectLibsql({ url: Deno.env.get("PETSTORE_DB") ?? "file:petstore.db" });
await migrateLibsql(db);
const adapters = libsqlAdapters(db);
const petstore = createPetstore(adapters);
// A new key at every start, for trying it out: only its hash is stored in the file.
const { key } = await issueApiKey(adapters.keys, { plan: "free", label: "deno-serve example" });

Deno.serve(
  {
    hostname: "127.0.0.1",
    port: Number(Deno.env.get("PORT") ?? 8000),
    onListen: ({ hostname, port }) => {
      console.log(`Pet Store on http://${hostname}:${port}/v1`);
      console.log(`curl -H "Authorization: Bearer ${key}" http://${hostname}:${port}/v1/pets`);
    },
  },
  // The client address names the rate-limit bucket of callers without a valid key.
  (request, info) => petstore.fetch(request, { clientAddress: info.remoteAddr.hostname }),
);
