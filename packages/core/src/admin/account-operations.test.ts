import { beforeEach, describe, expect, it } from "vitest";
import { ADMIN, adminWorld, T0 } from "../../../../test/_support/admin-world.js";

type View = Record<string, unknown>;

/** A world per test (the admin tests' world), its calls' answers read: status, headers and the body parsed. */
function world() {
  const w = adminWorld();
  const call = async (...args: Parameters<typeof w.call>) => {
    const response = await w.call(...args);
    const text = await response.text();
    const json = response.headers.get("content-type")?.startsWith("application/json") ? JSON.parse(text) : text;
    return { status: response.status, headers: response.headers, body: json };
  };
  return { ...w, call };
}

let w: ReturnType<typeof world>;
/** The Shop account (pro), made before each test. */
let shop: View;

beforeEach(async () => {
  w = world();
  shop = (await w.call("POST", "/accounts", { name: "Shop", plan: "pro" })).body;
});

describe("the admin API's accounts", () => {
  it("makes a key into an account follow it, unless given a plan or limits, kept through the account's change until followAccount", async () => {
    const follows = (await w.call("POST", "/keys", { accountId: shop.id })).body;
    const capped = (await w.call("POST", "/keys", { accountId: shop.id, plan: "free" })).body;
    expect((await w.call("PATCH", `/accounts/${String(shop.id)}`, { plan: "business" })).status).toBe(200);
    const viewOf = async (key: View) => (await w.call("GET", `/keys/${String(key.id)}`)).body;
    expect(await viewOf(follows)).toMatchObject({ plan: "business", perMinute: 1_000 });
    expect(await viewOf(capped)).toMatchObject({ plan: "free", perMinute: 60 });
    const refused = await w.call("PATCH", `/keys/${String(capped.id)}`, { followAccount: true, plan: "pro" });
    expect(refused.status).toBe(400);
    const followed = await w.call("PATCH", `/keys/${String(capped.id)}`, { followAccount: true });
    expect([followed.status, followed.body.plan, followed.body.perMinute]).toEqual([200, "business", 1_000]);
  });

  it("creates an account: 201, its Location, its view with the plan's limits and no keys", async () => {
    const created = await w.call("POST", "/accounts", { name: "Big Co", plan: "enterprise", perMinute: 5, perDay: 50 });
    expect(created.status).toBe(201);
    expect(created.headers.get("location")).toBe(`/admin/v1/accounts/${created.body.id}`);
    expect(created.body).toEqual({
      id: expect.stringMatching(/^acct_[A-Za-z0-9]{16}$/),
      name: "Big Co",
      plan: "enterprise",
      perMinute: 5,
      perDay: 50,
      ownLimits: true,
      allowFrom: null,
      createdAt: new Date(T0).toISOString(),
      keys: 0,
    });
    expect(shop).toMatchObject({ plan: "pro", perMinute: 300, perDay: 10_000, ownLimits: false });
  });

  it("refuses an account that breaks a rule with 400 naming each field, storing nothing", async () => {
    const refused = await w.call("POST", "/accounts", { name: "Big", plan: "enterprise", perMinute: 5 });
    expect(refused.status).toBe(400);
    expect(refused.body.details).toEqual([
      { path: "perDay", message: "is required for an enterprise key (its limits are its own, not a plan's)" },
    ]);
    expect((await w.call("POST", "/accounts", { name: "", plan: "free" })).body.details[0].path).toBe("name");
    expect((await w.call("POST", "/accounts", { name: "X", plan: "gold" })).body.details[0].path).toBe("plan");
    expect((await w.call("POST", "/accounts", { name: "X", plan: "free", allowFrom: [] })).status).toBe(400);
    expect(await w.adapters.keys.listAccounts()).toHaveLength(1);
  });

  it("answers a create retried with the same Idempotency-Key with the same account, and 422 for another body", async () => {
    const asked = { name: "Retry", plan: "free" };
    const first = await w.call("POST", "/accounts", asked, { "Idempotency-Key": "signup-7" });
    const again = await w.call("POST", "/accounts", asked, { "Idempotency-Key": "signup-7" });
    expect(again.status).toBe(201);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.body).toEqual(first.body);
    const other = await w.call("POST", "/accounts", { ...asked, plan: "pro" }, { "Idempotency-Key": "signup-7" });
    expect(other.status).toBe(422);
    expect(await w.adapters.keys.listAccounts()).toHaveLength(2);
  });

  it("gets an account by its id, and answers 404 for one no account has", async () => {
    expect((await w.call("GET", `/accounts/${shop.id}`)).body).toEqual(shop);
    const unknown = await w.call("GET", "/accounts/acct_none");
    expect(unknown.status).toBe(404);
    expect(unknown.body.code).toBe("not_found");
  });

  it("lists accounts as they were made, a page at a time, with nextCursor and a Link to the next page", async () => {
    await w.call("POST", "/accounts", { name: "Two", plan: "free" });
    await w.call("POST", "/accounts", { name: "Three", plan: "pro" });
    const first = await w.call("GET", "/accounts?limit=2");
    expect(first.body.accounts.map((account: View) => account.name)).toEqual(["Shop", "Two"]);
    expect(first.headers.get("link")).toBe(`</admin/v1/accounts?limit=2&cursor=${first.body.nextCursor}>; rel="next"`);
    const second = await w.call("GET", `/accounts?limit=2&cursor=${first.body.nextCursor}`);
    expect(second.body).toEqual({ accounts: [expect.objectContaining({ name: "Three" })], nextCursor: null });
    expect(second.headers.get("link")).toBeNull();
  });

  it("lists the accounts of one plan, and refuses a plan it does not know", async () => {
    await w.call("POST", "/accounts", { name: "Two", plan: "free" });
    await w.call("POST", "/keys", { plan: "pro" });
    const pro = await w.call("GET", "/accounts?plan=pro");
    expect(pro.body.accounts.map((account: View) => account.plan)).toEqual(["pro", "pro"]);
    expect((await w.call("GET", "/accounts?plan=gold")).status).toBe(400);
  });

  it("puts a key into an account: its plan and limits unless it caps them, counted in the account's view", async () => {
    const joined = await w.call("POST", "/keys", { accountId: shop.id, label: "staging" });
    expect(joined.status).toBe(201);
    expect(joined.body).toMatchObject({ accountId: shop.id, plan: "pro", perMinute: 300 });
    const capped = await w.call("POST", "/keys", { accountId: shop.id, perMinute: 10 });
    expect(capped.body).toMatchObject({ accountId: shop.id, plan: "pro", perMinute: 10, perDay: 10_000 });
    expect((await w.call("GET", `/accounts/${shop.id}`)).body.keys).toBe(2);
  });

  it("caps a key given a plan of its own with that plan's limits, not the account's own numbers", async () => {
    const big = await w.call("POST", "/accounts", {
      name: "Big",
      plan: "enterprise",
      perMinute: 5_000,
      perDay: 900_000,
    });
    const test = await w.call("POST", "/keys", { accountId: big.body.id, plan: "free" });
    expect(test.body).toMatchObject({ accountId: big.body.id, plan: "free", perMinute: 60, perDay: 1_000 });
  });

  it("refuses a key into an account no one has with 400 naming accountId, storing nothing", async () => {
    const refused = await w.call("POST", "/keys", { accountId: "acct_none", plan: "free" });
    expect(refused.status).toBe(400);
    expect(refused.body.details).toEqual([
      { path: "accountId", message: "must be the id of an account: none has the id acct_none" },
    ]);
    expect(await w.adapters.keys.list()).toEqual([]);
  });

  it("makes a key without an account one of its own, and still needs its plan", async () => {
    const alone = await w.call("POST", "/keys", { plan: "free" });
    expect(alone.body.accountId).toBe(`acct_${alone.body.id.slice(4)}`);
    const planless = await w.call("POST", "/keys", { label: "no plan" });
    expect(planless.status).toBe(400);
    expect(planless.body.details[0].path).toBe("plan");
  });

  it("lists the keys of one account", async () => {
    const inShop = await w.call("POST", "/keys", { accountId: shop.id });
    await w.call("POST", "/keys", { plan: "free" });
    const listed = await w.call("GET", `/keys?account=${shop.id}`);
    expect(listed.body.map((key: View) => key.id)).toEqual([inShop.body.id]);
  });

  it("changes an account's plan: its keys follow, a capped key keeps its caps, and this process applies it at once", async () => {
    const follower = await w.call("POST", "/keys", { accountId: shop.id });
    const capped = await w.call("POST", "/keys", { accountId: shop.id, perMinute: 10 });
    await w.api(follower.body.key);
    const changed = await w.call("PATCH", `/accounts/${shop.id}`, { plan: "business", name: "Shop Inc" });
    expect(changed.body).toMatchObject({ name: "Shop Inc", plan: "business", perMinute: 1_000, keys: 2 });
    expect((await w.call("GET", `/keys/${follower.body.id}`)).body.plan).toBe("business");
    expect((await w.call("GET", `/keys/${capped.body.id}`)).body).toMatchObject({ plan: "pro", perMinute: 10 });
    expect((await w.api(follower.body.key)).headers.get("x-ratelimit-limit")).toBe("1000");
  });

  it("gives a limit back to the plan with null, and refuses an enterprise plan without both limits as the CLI does", async () => {
    await w.call("PATCH", `/accounts/${shop.id}`, { perMinute: 400, perDay: 20_000 });
    const back = await w.call("PATCH", `/accounts/${shop.id}`, { perMinute: null });
    expect(back.body).toMatchObject({ perMinute: 300, perDay: 20_000, ownLimits: true });
    const refused = await w.call("PATCH", `/accounts/${shop.id}`, { plan: "enterprise" });
    expect(refused.status).toBe(400);
    expect(refused.body.details.map((detail: { path: string }) => detail.path)).toEqual(["perMinute"]);
    expect((await w.call("PATCH", "/accounts/acct_none", { plan: "free" })).status).toBe(404);
  });

  it("keeps an account's ranges: in its view, changed by PATCH and this process's keys refused at once, cleared with null", async () => {
    const office = await w.call("POST", "/accounts", { name: "Office", plan: "free", allowFrom: ["203.0.113.0/24"] });
    expect(office.body.allowFrom).toEqual(["203.0.113.0/24"]);
    const { key } = (await w.call("POST", "/keys", { accountId: office.body.id })).body;
    expect((await w.api(key)).status).toBe(200);
    const moved = await w.call("PATCH", `/accounts/${office.body.id}`, { allowFrom: ["10.0.0.0/8", "2001:db8::/32"] });
    expect(moved.body.allowFrom).toEqual(["10.0.0.0/8", "2001:db8::/32"]);
    const refused = await w.api(key);
    expect([refused.status, (await refused.json()).code]).toEqual([403, "address_not_allowed"]);
    expect((await w.call("PATCH", `/accounts/${office.body.id}`, { allowFrom: null })).body.allowFrom).toBeNull();
    expect((await w.api(key)).status).toBe(200);
  });

  it("refuses a malformed range or a prefix past /32 or /128 with 400 naming allowFrom", async () => {
    const created = await w.call("POST", "/accounts", { name: "X", plan: "free", allowFrom: ["10.0.0.0/33"] });
    expect(created.body.details).toEqual([
      {
        path: "allowFrom",
        message: "must be CIDR ranges: '10.0.0.0/33' has a prefix past /32, the longest an IPv4 range has",
      },
    ]);
    const changed = await w.call("PATCH", `/accounts/${shop.id}`, { allowFrom: ["::/129"] });
    expect([changed.status, changed.body.details]).toEqual([
      400,
      [
        {
          path: "allowFrom",
          message: "must be CIDR ranges: '::/129' has a prefix past /128, the longest an IPv6 range has",
        },
      ],
    ]);
    expect((await w.call("PATCH", `/accounts/${shop.id}`, { allowFrom: ["10.0.0"] })).body.details[0].path).toBe(
      "allowFrom",
    );
    expect((await w.call("GET", `/accounts/${shop.id}`)).body.allowFrom).toBeNull();
  });

  it("answers a create retried with the same Idempotency-Key but other ranges 422", async () => {
    const asked = { name: "Retry", plan: "free", allowFrom: ["10.0.0.0/8"] };
    expect((await w.call("POST", "/accounts", asked, { "Idempotency-Key": "signup-8" })).status).toBe(201);
    const other = { ...asked, allowFrom: ["0.0.0.0/0"] };
    expect((await w.call("POST", "/accounts", other, { "Idempotency-Key": "signup-8" })).status).toBe(422);
  });

  it("audits every account change under the account's id, with who made it and what it set", async () => {
    await w.call("PATCH", `/accounts/${shop.id}`, { plan: "business" });
    const trail = await w.call("GET", `/audit?keyId=${shop.id}`);
    expect(trail.body.map(({ action, keyId, actor, details }: View) => ({ action, keyId, actor, details }))).toEqual([
      { action: "update", keyId: shop.id, actor: ADMIN, details: { plan: "business" } },
      { action: "create", keyId: shop.id, actor: ADMIN, details: { name: "Shop", plan: "pro" } },
    ]);
  });

  it("sums its keys' usage, every outcome, as a key's usage is answered, in JSON and CSV", async () => {
    const one = await w.call("POST", "/keys", { accountId: shop.id });
    const two = await w.call("POST", "/keys", { accountId: shop.id });
    for (let i = 0; i < 3; i++) await w.api(one.body.key);
    await w.api(two.body.key);
    await w.call("POST", `/keys/${two.body.id}/revoke`);
    await w.api(two.body.key);
    await w.petstore.flush();
    w.clock.now = T0 + 60_000;
    const usage = await w.call("GET", `/accounts/${shop.id}/usage?step=minute&from=2030-01-15T12:00:00Z`);
    expect(usage.body).toEqual({
      accountId: shop.id,
      keyIds: [one.body.id, two.body.id],
      step: "minute",
      from: "2030-01-15T12:00:00.000Z",
      to: new Date(T0 + 60_000).toISOString(),
      totals: { admitted: 4, rateLimited: 0, banned: 0, unauthorized: 1 },
      buckets: [
        { at: "2030-01-15T12:00:00.000Z", admitted: 4, rateLimited: 0, banned: 0, unauthorized: 1 },
        { at: "2030-01-15T12:01:00.000Z", admitted: 0, rateLimited: 0, banned: 0, unauthorized: 0 },
      ],
    });
    const csv = await w.call("GET", `/accounts/${shop.id}/usage?step=minute&from=2030-01-15T12:00:00Z`, undefined, {
      Accept: "text/csv",
    });
    expect(csv.body).toBe(
      "at,admitted,rate_limited,banned,unauthorized\r\n2030-01-15T12:00:00.000Z,4,0,0,1\r\n2030-01-15T12:01:00.000Z,0,0,0,0\r\n",
    );
  });

  it("answers 404 for the usage of an account no one has", async () => {
    expect((await w.call("GET", "/accounts/acct_none/usage")).status).toBe(404);
  });
});
