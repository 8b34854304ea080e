import { IDEMPOTENCY_TTL_MS, type Pet } from "@petstore/core";
import { describe, expect, it } from "vitest";
import { ADAPTER_KITS, beforeEachWorld, errorBody, ROOMY_LIMITS, type World } from "./harness.js";

describe.each(ADAPTER_KITS)("Idempotency-Key on createPet on $name", (kit) => {
  let world: World;
  let key: string;
  beforeEachWorld(kit, ROOMY_LIMITS, (opened, freeKey) => ([world, key] = [opened, freeKey]));

  const post = (idempotencyKey: string, body: unknown, apiKey = key) =>
    world.call("POST", "/v1/pets", { key: apiKey, body, headers: { "Idempotency-Key": idempotencyKey } });
  const petCount = async () =>
    ((await (await world.call("GET", "/v1/pets?limit=100", { key })).json()) as unknown[]).length;

  it("replays the stored response for the same key and body, with Idempotent-Replayed: true", async () => {
    const first = await post("order-1", { name: "Rex", categoryId: 1 });
    expect(first.status).toBe(201);
    expect(first.headers.get("idempotent-replayed")).toBeNull();
    const second = await post("order-1", { name: "Rex", categoryId: 1 });
    expect(second.status).toBe(201);
    expect(second.headers.get("idempotent-replayed")).toBe("true");
    expect(second.headers.get("location")).toBe(first.headers.get("location"));
    expect(await second.json()).toEqual(await first.json());
    expect(await petCount()).toBe(1);
  });

  it("treats bodies differing only in key order and whitespace as the same body", async () => {
    await world.call("POST", "/v1/pets", {
      key,
      raw: '{"name":"Rex","categoryId":1}',
      headers: { "Idempotency-Key": "k", "Content-Type": "application/json" },
    });
    const again = await world.call("POST", "/v1/pets", {
      key,
      raw: '{ "categoryId": 1,\n "name": "Rex" }',
      headers: { "Idempotency-Key": "k", "Content-Type": "application/json" },
    });
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(await petCount()).toBe(1);
  });

  it("returns 422 idempotency_key_reused for the same key with a different body", async () => {
    await post("order-1", { name: "Rex", categoryId: 1 });
    await errorBody(await post("order-1", { name: "Max", categoryId: 1 }), 422, "idempotency_key_reused");
    expect(await petCount()).toBe(1);
  });

  it("returns 409 idempotency_key_in_use while the first request is still running", async () => {
    let finish!: () => void;
    const gate = new Promise<void>((resolve) => (finish = resolve));
    let reached!: () => void;
    const inStore = new Promise<void>((resolve) => (reached = resolve));
    const createClaimedPet = world.adapters.store.createClaimedPet.bind(world.adapters.store);
    world.adapters.store.createClaimedPet = async (...args) => {
      reached();
      await gate;
      return createClaimedPet(...args);
    };
    const first = post("slow", { name: "Rex", categoryId: 1 });
    // The second request arrives once the first holds its claim and waits in the store.
    await Promise.race([
      inStore,
      first.then((response) =>
        Promise.reject(new Error(`the first request was answered ${response.status} before reaching the store`)),
      ),
    ]);
    await errorBody(await post("slow", { name: "Rex", categoryId: 1 }), 409, "idempotency_key_in_use");
    finish();
    expect((await first).status).toBe(201);
    expect((await post("slow", { name: "Rex", categoryId: 1 })).headers.get("idempotent-replayed")).toBe("true");
  });

  it("lets a retry run when the first attempt failed in storage", async () => {
    const createClaimedPet = world.adapters.store.createClaimedPet.bind(world.adapters.store);
    world.adapters.store.createClaimedPet = async () => {
      throw new Error("disk on fire");
    };
    const failed = await post("retry-me", { name: "Rex", categoryId: 1 });
    expect(failed.status).toBe(500);
    expect(world.internalErrors.splice(0)).toEqual([expect.objectContaining({ message: "disk on fire" })]);
    world.adapters.store.createClaimedPet = createClaimedPet;
    const retried = await post("retry-me", { name: "Rex", categoryId: 1 });
    expect(retried.status).toBe(201);
    expect(retried.headers.get("idempotent-replayed")).toBeNull();
  });

  it("scopes keys to the API key: another caller's same Idempotency-Key creates its own pet", async () => {
    const other = await world.key();
    const mine = (await (await post("shared", { name: "Rex", categoryId: 1 })).json()) as Pet;
    const theirs = (await (await post("shared", { name: "Rex", categoryId: 1 }, other)).json()) as Pet;
    expect(theirs.id).not.toBe(mine.id);
  });

  it("keeps a key for 24 hours, then forgets it", async () => {
    await post("daily", { name: "Rex", categoryId: 1 });
    world.clock.now += IDEMPOTENCY_TTL_MS - 1;
    await errorBody(await post("daily", { name: "Max", categoryId: 1 }), 422, "idempotency_key_reused");
    world.clock.now += 2;
    const fresh = await post("daily", { name: "Max", categoryId: 1 });
    expect(fresh.status).toBe(201);
    expect(fresh.headers.get("idempotent-replayed")).toBeNull();
  });

  it.each([
    ["256 characters", "k".repeat(256)],
    ["a non-ASCII character", "clé"],
    ["a control character", "a\tb"],
  ])("returns 400 when the Idempotency-Key has %s", async (_what, value) => {
    const headers = new Headers();
    try {
      headers.set("Idempotency-Key", value);
    } catch {
      return; // Headers cannot even carry it; nothing reaches the service.
    }
    const body = await errorBody(await post(value, { name: "Rex", categoryId: 1 }), 400, "invalid_parameter");
    expect(body.message).toContain("Idempotency-Key");
    expect(await petCount()).toBe(0);
  });

  it("returns 400 for an empty Idempotency-Key", async () => {
    await errorBody(await post("", { name: "Rex", categoryId: 1 }), 400, "invalid_parameter");
  });

  it("accepts an Idempotency-Key of 255 printable characters", async () => {
    expect((await post("~".repeat(255), { name: "Rex", categoryId: 1 })).status).toBe(201);
  });

  it("produces exactly one pet from concurrent requests with one key", async () => {
    const answers = await Promise.all(Array.from({ length: 8 }, () => post("burst", { name: "Rex", categoryId: 1 })));
    const statuses = answers.map((a) => a.status);
    expect(statuses.every((s) => s === 201 || s === 409)).toBe(true);
    expect(statuses.filter((s) => s === 201).length).toBeGreaterThanOrEqual(1);
    expect(await petCount()).toBe(1);
  });
});
