import { IDEMPOTENCY_LEASE_MS } from "@petstore/core";
import { describe, expect, it } from "vitest";
import { useTempDatabase } from "../../../../test/_support/libsql-database.js";
import { libsqlIdempotency, libsqlStore } from "./index.js";

const T0 = Date.UTC(2030, 0, 15, 12, 0, 0);
const claimOf = (key: string) => ({ scope: "key_a", key, fingerprint: "a".repeat(64) });

describe("libsqlIdempotency", () => {
  const database = useTempDatabase();

  it("deletes dead records on every 1000th claim and keeps live ones", async () => {
    let now = T0;
    const idempotency = libsqlIdempotency(database().db, { clock: () => now });
    const store = libsqlStore(database().db);
    const rows = async () => Number((await database().query("SELECT count(*) AS n FROM idempotency_keys"))[0]!.n);
    await idempotency.claim(claimOf("completed"));
    const { pet } = (await store.createClaimedPet({ name: "Rex", categoryId: 1 }, claimOf("completed"))) as {
      pet: { id: number };
    };
    // Unfinished claims, abandoned: dead once the lease has run out.
    for (let i = 0; i < 998; i++) await idempotency.claim(claimOf(`abandoned-${i}`));
    expect(await rows()).toBe(999);

    now = T0 + IDEMPOTENCY_LEASE_MS + 1;
    expect(await idempotency.claim(claimOf("thousandth"))).toEqual({ state: "claimed" });
    expect(await rows()).toBe(2);
    expect(await idempotency.claim(claimOf("completed"))).toEqual({ state: "completed", petId: pet.id });
  });
});
