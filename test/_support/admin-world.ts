import { memoryAdapters } from "@petstore/adapters/memory";
import { type Actor, type AdminOptions, createAdmin, createPetstore, type PetstoreOptions } from "@petstore/core";

/** Where the admin API's tests start: 12:00:10 UTC, so that the first requests fall in the 12:00 minute. */
export const T0 = Date.UTC(2030, 0, 15, 12, 0, 10);
/** The one credential the tests' host accepts. */
export const TOKEN = "Bearer admin-test-token";
/** Who the admin API's tests are, from the address their calls come from. */
export const ADMIN: Actor = { who: "admin:tok_test", from: "192.0.2.50" };

/**
 * The world of the admin API's tests: the API and its admin API on one set of memory adapters,
 * on a clock the test moves (`clock.now`), the admin telling the API of each change to a key.
 * `call` is an operator's call (from ADMIN's address, with TOKEN), `api` a key's request of the API.
 */
export function adminWorld(
  options: { start?: number; petstore?: Partial<PetstoreOptions>; admin?: Partial<AdminOptions> } = {},
) {
  const clock = { now: options.start ?? T0 };
  const adapters = memoryAdapters({ clock: () => clock.now });
  const petstore = createPetstore({ ...adapters, keyCacheMs: 5_000, ...options.petstore });
  const admin = createAdmin({
    keys: adapters.keys,
    limiter: adapters.limiter,
    idempotency: adapters.idempotency,
    onKeyChange: petstore.forgetKey,
    clock: () => clock.now,
    // The host's own authentication: here one fixed token.
    authenticate: (request, info) =>
      request.headers.get("authorization") === TOKEN
        ? { who: ADMIN.who, ...(info?.clientAddress && { from: info.clientAddress }) }
        : undefined,
    ...options.admin,
  });
  const call = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
    admin.fetch(
      new Request(`http://admin.test/admin/v1${path}`, {
        method,
        headers: {
          Authorization: TOKEN,
          ...(body !== undefined && { "Content-Type": "application/json" }),
          ...headers,
        },
        ...(body !== undefined && { body: JSON.stringify(body) }),
      }),
      { clientAddress: ADMIN.from },
    );
  const api = (key: string) =>
    petstore.fetch(
      new Request("http://petstore.test/v1/pets?limit=1", { headers: { Authorization: `Bearer ${key}` } }),
      { clientAddress: "203.0.113.9" },
    );
  return { clock, adapters, petstore, admin, call, api };
}
