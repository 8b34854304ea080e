import { type AdminTokensFixture, adminTokensContract } from "./admin-tokens-contract.js";
import { apiKeysContract, type MakeKeys } from "./api-keys-contract.js";
import { idempotencyContract } from "./idempotency-contract.js";
import { keyUsageContract } from "./key-usage-contract.js";
import { type MakeStore, petStoreContract } from "./pet-store-contract.js";
import { type MakeLimiter, type RateLimiterContractOptions, rateLimiterContract } from "./rate-limiter-contract.js";

/** Factories of fresh instances of one store's adapters, each given the clock its store must use. */
export interface StoreFixtures {
  /** The pet store and its idempotency store, on one database. */
  store: MakeStore;
  limiter: MakeLimiter;
  keys: MakeKeys;
  /** Absent for a store that keeps no admin tokens. */
  adminTokens?: (clock: (() => number) | undefined) => Promise<AdminTokensFixture>;
}

export interface StoreContractsOptions {
  limiter?: RateLimiterContractOptions;
}

/**
 * Every contract a store's adapters are held to, in one list: a contract added here runs on
 * every store that calls this.
 * @example storeContracts("memory", { store, limiter, keys, adminTokens });
 */
export function storeContracts(name: string, fixtures: StoreFixtures, options: StoreContractsOptions = {}): void {
  petStoreContract(name, fixtures.store);
  idempotencyContract(name, fixtures.store);
  rateLimiterContract(name, fixtures.limiter, options.limiter);
  apiKeysContract(name, fixtures.keys);
  keyUsageContract(name, fixtures.keys);
  if (fixtures.adminTokens) adminTokensContract(name, fixtures.adminTokens);
}
