import { describe, expect, it } from "vitest";

/**
 * The runtime names each public entry point exports. A change to a package's surface must
 * show up here as a visible diff, reviewed on purpose.
 */
const exportedNames = async (specifier: string) => Object.keys(await import(specifier)).sort();

describe("public API", () => {
  it("@petstore/core exports exactly these names", async () => {
    expect(await exportedNames("@petstore/core")).toEqual([
      "ApiError",
      "DEFAULT_BAN",
      "DEFAULT_PLANS",
      "ERROR_STATUS",
      "GET_PET_DEPRECATED_AT",
      "GET_PET_SUNSET_AT",
      "IDEMPOTENCY_LEASE_MS",
      "IDEMPOTENCY_TTL_MS",
      "NewOrderSchema",
      "NewPetSchema",
      "ORDER_STATUSES",
      "OrderSchema",
      "PET_STATUSES",
      "PetSchema",
      "StorageUnavailableError",
      "createPetstore",
      "generateApiKey",
      "hashApiKey",
      "headResponse",
      "isWellFormedApiKey",
      "issueApiKey",
      "pathnameOf",
      "requestIdOf",
      "standardHeaders",
      "toErrorResponse",
      "trustedProxies",
    ]);
  });

  it("@petstore/core/testing exports exactly these names", async () => {
    expect(await exportedNames("@petstore/core/testing")).toEqual([
      "apiKeysContract",
      "idempotencyContract",
      "petStoreContract",
      "rateLimiterContract",
    ]);
  });
});
