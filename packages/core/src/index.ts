/**
 * `@petstore/core`: what a user mounts (`createPetstore`), configures (its options and
 * defaults), implements (the ports an adapter fills, the errors it throws) and tests with (the
 * schemas and the error catalogue; the contract suites are in `@petstore/core/testing`).
 * The operations are not exported on their own: without the pipeline they would skip
 * authentication and rate limits.
 */

// Mount and configure.
export { createPetstore } from "./app.js";
export { createAdmin } from "./admin/create-admin.js";
export type { Admin, AdminOptions } from "./admin/create-admin.js";
export { isWellFormedAdminToken, issueAdminToken, verifyAdminToken } from "./admin/tokens.js";
export { instantOf } from "./admin/schemas.js";
export { keyView } from "./admin/key-view.js";
export type { KeyViewSource } from "./admin/key-view.js";
export type { KeyView } from "./admin/schemas.js";
export type { Petstore } from "./app.js";
export type { PetstoreOptions, ResponseEvent } from "./options.js";
export type { ClientInfo } from "./pipeline/client-address.js";
export type { Beside, BesidePage } from "./pipeline/beside.js";
export { DEFAULT_BAN, DEFAULT_PLANS } from "./plans.js";
export type { PlanLimits } from "./plans.js";
export { GET_PET_DEPRECATED_AT, GET_PET_SUNSET_AT } from "./context.js";
export type { DeprecationDates } from "./context.js";
/** Validates `trustProxy` ranges where configuration is read, before `createPetstore` (the binary's `--trust-proxy`). */
export { trustedProxies } from "./ip-addresses.js";

// API keys.
export {
  generateApiKey,
  hashApiKey,
  isWellFormedApiKey,
  issueApiKey,
  MAX_ROLL_OVERLAP_MS,
  rollApiKey,
} from "./api-keys.js";
export type { IssueApiKeyInput, IssueApiKeyOptions } from "./api-keys.js";

// Implement an adapter: the ports, their constants, the errors an adapter throws.
export { CLOCK_STEP_MS, IDEMPOTENCY_LEASE_MS, IDEMPOTENCY_TTL_MS } from "./ports.js";
export type {
  Actor,
  Adapters,
  AdminTokenRecord,
  AdminTokens,
  ApiKeyRecord,
  ApiKeys,
  AuditAction,
  AuditEntry,
  BanPolicy,
  BucketState,
  ClaimedCreate,
  ClaimResult,
  Decision,
  HitInput,
  IdempotencyClaim,
  IdempotencyStore,
  KeyChange,
  KeyChanges,
  PageQuery,
  PetStore,
  PlanName,
  RateLimiter,
  WindowPair,
  WindowSpec,
  WindowState,
} from "./ports.js";
export { ApiError, ERROR_STATUS, StorageUnavailableError, toErrorResponse } from "./errors.js";
export type { ErrorCode } from "./errors.js";

// The resources, as valibot schemas; the types are inferred from them.
export { NewOrderSchema, NewPetSchema, ORDER_STATUSES, OrderSchema, PET_STATUSES, PetSchema } from "./schemas.js";
export type {
  ErrorBody,
  ErrorDetail,
  NewOrder,
  NewOrderInput,
  NewPet,
  Order,
  OrderStatus,
  Pet,
  PetStatus,
} from "./schemas.js";
