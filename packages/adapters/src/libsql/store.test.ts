import { IDEMPOTENCY_LEASE_MS, type PetStatus, type PetStore } from "@petstore/core";
import { petPages } from "@petstore/core/testing";
import { describe, expect, it } from "vitest";
import NativeDatabase from "libsql";
import { libsqlConnection } from "./_source.js";
import { tempDatabase, useTempDatabase } from "../../../../test/_support/libsql-database.js";
import { libsqlIdempotency, libsqlStore } from "./index.js";
import { localEngine } from "./local/local-engine.js";

const T0 = Date.UTC(2030, 0, 15, 12, 0, 0);
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));
const claimOf = (fingerprint: string) => ({ scope: "key_a", key: "retry-1", fingerprint });

/** The store with its pets listed through the page cache core keeps while petsVersion stays put. */
function listedByCore(store: PetStore) {
  const pages = petPages(store);
  return { createPet: store.createPet, listPets: async (query: { limit: number }) => (await pages.list(query)).rows };
}

describe("libsqlStore", () => {
  const database = useTempDatabase();

  it("tells a petsVersion that moves with every change to pets, made by any connection or by hand", async () => {
    const store = libsqlStore(database().db);
    const other = libsqlStore(await database().connect());
    const version = () => store.petsVersion!();
    const before = await version();
    await other.createPet({ name: "Fido", categoryId: 2 });
    const afterOther = await version();
    expect(afterOther).not.toBe(before);
    await database().query("UPDATE pets SET status = 'sold'");
    await nextTurn();
    expect(await version()).not.toBe(afterOther);
  });

  it("tells no petsVersion over a plain client: a version read would cost a second round trip", async () => {
    const plain = await tempDatabase({ plain: true });
    try {
      expect(libsqlStore(plain.db).petsVersion).toBeUndefined();
    } finally {
      await plain.close();
    }
  });

  it("stores creates fired at once (one INSERT per write batch) with ids in order of arrival, each answered with its own pet", async () => {
    const store = libsqlStore(database().db);
    const statuses: (PetStatus | undefined)[] = ["available", undefined, "sold", "pending"];
    const inputs = Array.from({ length: 150 }, (_, i) => ({
      name: `Pet ${i}`,
      categoryId: i + 1,
      ...(statuses[i % 4] ? { status: statuses[i % 4] } : {}),
    }));
    const created = await Promise.all(inputs.map((input) => store.createPet(input)));
    expect(created).toEqual(inputs.map((input, i) => ({ id: i + 1, ...input })));
    expect(await store.listPets({ limit: 200 })).toEqual(created);
  });

  it("answers a create, a list and a lookup only once what they wrote or read is on disk", async () => {
    // The adapters' connection with a WAL fsync that ends when the test says so.
    const fsyncs: (() => void)[] = [];
    const walSync = {
      sync: () => new Promise<void>((resolve) => fsyncs.push(resolve)),
      reopen: () => {},
      close: () => {},
    };
    const engine = localEngine(() => new NativeDatabase(database().path), { walSync });
    const store = libsqlStore(libsqlConnection(engine, () => engine.close()));
    const settled = async (promise: Promise<unknown>) => {
      let done = false;
      void promise.then(() => (done = true));
      for (let i = 0; i < 5; i++) await nextTurn();
      return done;
    };
    const created = store.createPet({ name: "Rex", categoryId: 1 });
    expect(await settled(created)).toBe(false);
    fsyncs.shift()!();
    await created;
    // Committed and fsynced, but the list cannot know that: it waits for an fsync of its own
    // (core asks again only when petsVersion moved: see cachePetPages).
    const listed = store.listPets({ limit: 21 });
    expect(await settled(listed)).toBe(false);
    fsyncs.shift()!();
    expect((await listed).map((pet) => pet.name)).toEqual(["Rex"]);
    const found = store.getPet(1);
    expect(await settled(found)).toBe(false);
    fsyncs.shift()!();
    expect((await found)?.name).toBe("Rex");
  });

  it("never hands out the id of a deleted pet again", async () => {
    const store = libsqlStore(database().db);
    await store.createPet({ name: "Rex", categoryId: 1 });
    const last = await store.createPet({ name: "Fido", categoryId: 1 });
    await database().query(`DELETE FROM pets WHERE id = ${last.id}`);
    expect((await store.createPet({ name: "Tom", categoryId: 1 })).id).toBe(last.id + 1);
  });

  it("lists at once a pet another connection created, and from the next turn no pet deleted by hand", async () => {
    const store = listedByCore(libsqlStore(database().db));
    const other = libsqlStore(await database().connect());
    await store.createPet({ name: "Rex", categoryId: 1 });
    // Listed twice: the second answer may come from the page kept in memory.
    expect((await store.listPets({ limit: 10 })).map((pet) => pet.name)).toEqual(["Rex"]);
    expect((await store.listPets({ limit: 10 })).map((pet) => pet.name)).toEqual(["Rex"]);
    await other.createPet({ name: "Fido", categoryId: 2 });
    expect((await store.listPets({ limit: 10 })).map((pet) => pet.name)).toEqual(["Rex", "Fido"]);
    // A change by hand is listed from the next turn of the event loop on: the lists of one turn
    // share one read of the version (as requests taken in that turn may be ordered before it).
    await database().query("DELETE FROM pets WHERE name = 'Rex'");
    await nextTurn();
    expect((await store.listPets({ limit: 10 })).map((pet) => pet.name)).toEqual(["Fido"]);
    await database().query("UPDATE pets SET status = 'sold'");
    await nextTurn();
    expect(await store.listPets({ limit: 10 })).toEqual([{ id: 2, name: "Fido", categoryId: 2, status: "sold" }]);
  });

  it("lists a pet it created at once, though a list of the same turn read the version before the commit", async () => {
    const store = listedByCore(libsqlStore(database().db));
    // The create's batch is queued first, so it commits before the list's read is forgotten.
    const creating = store.createPet({ name: "Rex", categoryId: 1 });
    expect(await store.listPets({ limit: 10 })).toEqual([]);
    const rex = await creating;
    expect(await store.listPets({ limit: 10 })).toEqual([rex]);
  });

  it("lists a pet another connection created in a later turn, though this turn's lists shared one read", async () => {
    const store = listedByCore(libsqlStore(database().db));
    const other = libsqlStore(await database().connect());
    expect(await Promise.all([store.listPets({ limit: 10 }), store.listPets({ limit: 5 })])).toEqual([[], []]);
    const fido = await other.createPet({ name: "Fido", categoryId: 2 });
    expect(await store.listPets({ limit: 10 })).toEqual([fido]);
  });

  it("gives unique ids to pets created at once through several connections", async () => {
    const clients = [database().db, await database().connect(), await database().connect()];
    const created = await Promise.all(
      Array.from({ length: 30 }, (_, i) => libsqlStore(clients[i % 3]!).createPet({ name: `Pet ${i}`, categoryId: 1 })),
    );
    expect(new Set(created.map((pet) => pet.id)).size).toBe(30);
  });

  it("commits a pet and the completion of its claim together: a failed insert leaves the claim unfinished", async () => {
    const store = libsqlStore(database().db);
    const idempotency = libsqlIdempotency(database().db);
    const claim = claimOf("a".repeat(64));
    await idempotency.claim(claim);
    // The CHECK constraint refuses this status, so the transaction rolls back.
    await expect(
      store.createClaimedPet({ name: "Rex", categoryId: 1, status: "lost" as PetStatus }, claim),
    ).rejects.toThrow();
    expect(await idempotency.claim(claim)).toEqual({ state: "in_progress" });
    expect(await store.listPets({ limit: 10 })).toEqual([]);
  });

  it("creates no pet under a claim that another request took over after the lease, and says so", async () => {
    const store = libsqlStore(database().db);
    let now = T0;
    const idempotency = libsqlIdempotency(database().db, { clock: () => now });
    const stale = claimOf("a".repeat(64));
    const taker = claimOf("b".repeat(64));
    await idempotency.claim(stale);
    now = T0 + IDEMPOTENCY_LEASE_MS;
    expect(await idempotency.claim(taker)).toEqual({ state: "claimed" });

    expect(await store.createClaimedPet({ name: "Late", categoryId: 1 }, stale)).toEqual({ state: "claim_lost" });
    const onTime = await store.createClaimedPet({ name: "On time", categoryId: 1 }, taker);
    if (onTime.state !== "created") throw new Error("not created");
    const { pet } = onTime;
    expect(await store.listPets({ limit: 10 })).toEqual([pet]);
    now = T0 + IDEMPOTENCY_LEASE_MS + 1;
    expect(await idempotency.claim(taker)).toEqual({ state: "completed", petId: pet.id });
  });
});
