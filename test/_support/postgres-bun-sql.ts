// Run by Bun (see packages/adapters/src/postgres/bun-sql.test.ts): the Postgres adapters on
// Bun's built-in client, through the same port as postgres.js. Prints one JSON line of outcomes.
import { createPetstore, issueApiKey } from "@petstore/core";
import { checkPostgres, migratePostgres, postgresAdapters } from "@petstore/adapters/postgres";

const url = process.argv[2];
if (!url) throw new Error("usage: bun postgres-bun-sql.ts POSTGRES_URL");
const sql = new Bun.SQL(url, { max: 4 });
const source = { sql };
await Promise.all([migratePostgres(source), migratePostgres(source)]);
await checkPostgres(source);
const T0 = Date.UTC(2030, 0, 15, 12, 0, 10);
const adapters = postgresAdapters(source, { clock: () => T0 });
const petstore = createPetstore({ ...adapters, clock: () => T0 });
const { key, record } = await issueApiKey(adapters.keys, { plan: "free", label: "bun" }, { now: T0 });
const call = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
  petstore.fetch(
    new Request(`http://petstore.test${path}`, {
      method,
      headers: {
        Authorization: `Bearer ${key}`,
        ...(body === undefined ? {} : { "Content-Type": "application/json" }),
        ...headers,
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    }),
    { clientAddress: "203.0.113.7" },
  );
const creates = await Promise.all(
  Array.from({ length: 10 }, (_, i) => call("POST", "/v1/pets", { name: `Pet ${i}`, categoryId: i + 1 })),
);
const ids = await Promise.all(creates.map(async (response) => ((await response.json()) as { id: number }).id));
const replays = await Promise.all(
  Array.from({ length: 3 }, () =>
    call("POST", "/v1/pets", { name: "Once", categoryId: 1 }, { "Idempotency-Key": "bun-1" }),
  ),
);
const order = await adapters.store.createOrder({ petId: ids[0]!, quantity: 2, status: "placed", complete: true });
const listed = (await (await call("GET", "/v1/pets?limit=100")).json()) as unknown[];
// 10 + 3 + 1 requests so far: 46 more are admitted, then 429s.
const statuses = await Promise.all(
  Array.from({ length: 50 }, () => call("GET", "/v1/pets?limit=1").then((response) => response.status)),
);
const revoked = (await adapters.keys.revoke(record.id)).state === "changed";
const keys = await adapters.keys.list();
console.log(
  JSON.stringify({
    created: creates.map((response) => response.status),
    ids,
    replays: await Promise.all(
      replays.map(async (response) => ({
        status: response.status,
        id: response.status === 201 ? ((await response.json()) as { id: number }).id : undefined,
      })),
    ),
    listed: listed.length,
    order,
    admitted: statuses.filter((status) => status === 200).length,
    limited: statuses.filter((status) => status === 429).length,
    revoked,
    keys: keys.map((each) => ({ plan: each.plan, label: each.label, revoked: each.revokedAt === T0 })),
  }),
);
await sql.close();
