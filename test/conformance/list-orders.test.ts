import { type NewOrder, NewOrderSchema } from "@petstore/core";
import * as v from "valibot";
import { describe, expect, it } from "vitest";
import { ADAPTER_KITS, beforeEachWorld, errorBody, ROOMY_LIMITS, type World } from "./harness.js";

describe.each(ADAPTER_KITS)("listOrders (GET /store/orders) on $name", (kit) => {
  let world: World;
  let key: string;
  beforeEachWorld(kit, ROOMY_LIMITS, (opened, freeKey) => ([world, key] = [opened, freeKey]));

  async function seed(...orders: v.InferInput<typeof NewOrderSchema>[]) {
    for (const order of orders) await world.adapters.store.createOrder(v.parse(NewOrderSchema, order) as NewOrder);
  }

  it("lists orders written through the storage API, ordered by id, with defaults applied", async () => {
    await seed(
      { petId: 1, quantity: 2 },
      { petId: 3, quantity: 1, status: "delivered", complete: true, shipDate: "2026-11-20T10:00:00Z" },
    );
    const response = await world.call("GET", "/v1/store/orders", { key });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual([
      { id: 1, petId: 1, quantity: 2, status: "placed", complete: false },
      { id: 2, petId: 3, quantity: 1, status: "delivered", complete: true, shipDate: "2026-11-20T10:00:00Z" },
    ]);
  });

  it("filters by order status and pages with Link like /pets", async () => {
    await seed(
      ...Array.from(
        { length: 6 },
        (_, i) => ({ petId: 1, quantity: 1, status: i % 2 ? "approved" : "placed" }) as const,
      ),
    );
    const first = await world.call("GET", "/v1/store/orders?status=approved&limit=2", { key });
    expect(((await first.json()) as { id: number }[]).map((o) => o.id)).toEqual([2, 4]);
    const link = first.headers.get("link")!;
    expect(link).toMatch(/^<\/v1\/store\/orders\?limit=2&status=approved&cursor=[A-Za-z0-9_-]+>; rel="next"$/);
    const second = await world.call("GET", link.slice(1, link.indexOf(">")), { key });
    expect(((await second.json()) as { id: number }[]).map((o) => o.id)).toEqual([6]);
    expect(second.headers.get("link")).toBeNull();
  });

  it.each([["status=sold"], ["limit=0"], ["limit=101"], ["cursor=nope"], ["status=placed&status=approved"]])(
    "returns 400 invalid_parameter for ?%s",
    async (query) => {
      await errorBody(await world.call("GET", `/v1/store/orders?${query}`, { key }), 400, "invalid_parameter");
    },
  );

  it("requires an API key", async () => {
    await errorBody(await world.call("GET", "/v1/store/orders"), 401, "unauthorized");
  });
});
