/**
 * Contract suites, one per port, written with vitest: an adapter's test file calls each with
 * a factory of fresh instances, so every adapter is held to the same assertions.
 * @example
 * import { petStoreContract } from "@petstore/core/testing";
 * petStoreContract("memory", async (clock) => memoryAdapters({ clock }));
 */
export { adminTokensContract } from "./admin-tokens-contract.js";
export type { AdminTokensFixture } from "./admin-tokens-contract.js";
export { apiKeysContract } from "./api-keys-contract.js";
export type { KeysFixture, MakeKeys } from "./api-keys-contract.js";
export { idempotencyContract } from "./idempotency-contract.js";
export { keyUsageContract } from "./key-usage-contract.js";
export { petStoreContract } from "./pet-store-contract.js";
export type { MakeStore, StoreFixture } from "./pet-store-contract.js";
export { rateLimiterContract } from "./rate-limiter-contract.js";
export type { LimiterFixture, MakeLimiter, RateLimiterContractOptions } from "./rate-limiter-contract.js";
export { storeContracts } from "./store-contracts.js";
export type { StoreContractsOptions, StoreFixtures } from "./store-contracts.js";
/** Core's pages of the pet list, kept while `petsVersion` stays put: to test a store's `petsVersion` as core reads it. */
export { petPages } from "../pet-page-cache.js";
export type { Page, PetPages } from "../pet-page-cache.js";
