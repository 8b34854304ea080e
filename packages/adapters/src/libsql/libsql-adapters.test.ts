import type { Client } from "@libsql/client";
import { createPetstore, generateApiKey, issueApiKey, type Petstore } from "@petstore/core";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { plainClient, tempDatabase } from "../../../../test/_support/libsql-database.js";
import { libsqlAdapters } from "./index.js";
import { connectLibsql } from "./local/connect-libsql.js";

const T0 = Date.UTC(2030, 0, 15, 12, 0, 10);

function postPet(petstore: Petstore, key: string, headers: Record<string, string> = {}): Promise<Response> {
  return petstore.fetch(
    new Request("http://petstore.test/v1/pets", {
      method: "POST",
      headers: { Authorization: `Bearer ${key}`, "Content-Type": "application/json", ...headers },
      body: JSON.stringify({ name: "Rex", categoryId: 1 }),
    }),
    { clientAddress: "203.0.113.7" },
  );
}

/** The client, counting the calls that reach the database (each is one round trip). */
function counted(client: Client): { client: Client; calls: () => number } {
  let calls = 0;
  const proxy = new Proxy(client, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver);
      if (property !== "execute" && property !== "batch")
        return typeof value === "function" ? value.bind(target) : value;
      return (...args: unknown[]) => {
        calls += 1;
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return { client: proxy, calls: () => calls };
}

describe("libsqlAdapters", () => {
  let database: Awaited<ReturnType<typeof tempDatabase>>;
  let key: string;
  beforeEach(async () => {
    database = await tempDatabase();
    ({ key } = await issueApiKey(libsqlAdapters(database.db).keys, { plan: "pro" }, { now: T0 }));
  });
  afterEach(async () => {
    await database.close();
  });

  it("makes one pet of concurrent requests with one Idempotency-Key sent to two processes' connections", async () => {
    const petstores = [database.db, await database.connect()].map((db) =>
      createPetstore({ ...libsqlAdapters(db), clock: () => T0 }),
    );
    const responses = await Promise.all(
      Array.from({ length: 12 }, (_, i) => postPet(petstores[i % 2]!, key, { "Idempotency-Key": "order-1" })),
    );
    const statuses = responses.map((response) => response.status);
    const firsts = responses.filter(
      (response) => response.status === 201 && !response.headers.has("Idempotent-Replayed"),
    );
    expect(firsts).toHaveLength(1);
    expect(statuses.every((status) => status === 201 || status === 409)).toBe(true);
    const ids = new Set(
      await Promise.all(
        responses.filter((r) => r.status === 201).map(async (r) => ((await r.json()) as { id: number }).id),
      ),
    );
    expect(ids.size).toBe(1);
    expect(Number((await database.query("SELECT count(*) AS n FROM pets"))[0]!.n)).toBe(1);
  });

  it("replays the stored pet to a retry with the same Idempotency-Key", async () => {
    const petstore = createPetstore({ ...libsqlAdapters(database.db), clock: () => T0 });
    const first = await postPet(petstore, key, { "Idempotency-Key": "order-2" });
    const retry = await postPet(petstore, key, { "Idempotency-Key": "order-2" });
    expect(retry.status).toBe(201);
    expect(retry.headers.get("Idempotent-Replayed")).toBe("true");
    expect(await retry.json()).toEqual(await first.json());
  });

  it("costs a create over a client two round trips (limiter, insert) and three with an Idempotency-Key (limiter, claim, insert)", async () => {
    const plain = await plainClient(database.url);
    const { client, calls } = counted(plain);
    const petstore = createPetstore({ ...libsqlAdapters({ client }), clock: () => T0 });
    // The first request also looks the key up; core then caches it for 5 s.
    expect((await postPet(petstore, key)).status).toBe(201);
    const before = calls();
    expect((await postPet(petstore, key)).status).toBe(201);
    expect(calls() - before).toBe(2);
    const beforeIdempotent = calls();
    expect((await postPet(petstore, key, { "Idempotency-Key": "order-3" })).status).toBe(201);
    expect(calls() - beforeIdempotent).toBe(3);
    plain.close();
  });
});

describe("libsqlAdapters on a database never migrated", () => {
  it("answers a request 500 and tells onError to run migrateLibsql, not SQLite's 'no such table'", async () => {
    const database = await connectLibsql({ url: ":memory:" });
    const errors: unknown[] = [];
    const petstore = createPetstore({ ...libsqlAdapters(database), onError: (error) => errors.push(error) });
    try {
      const response = await petstore.fetch(
        new Request("http://petstore.test/v1/pets", { headers: { Authorization: `Bearer ${generateApiKey()}` } }),
        { clientAddress: "203.0.113.7" },
      );
      expect(response.status).toBe(500);
      expect(String(errors[0])).toMatch(
        /^Error: the database has no table (api_keys|rate_limits): run migrateLibsql on it before the adapters use it$/,
      );
    } finally {
      database.close();
    }
  });
});
