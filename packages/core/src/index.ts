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
export {
  adminTokenId,
  isWellFormedAdminToken,
  issueAdminToken,
  revokeAdminToken,
  verifyAdminToken,
} from "./admin/tokens.js";
export type { AdminTokenAudit } from "./admin/tokens.js";
export { instantOf, KEY_STATES } from "./admin/schemas.js";
export { keyView } from "./admin/key-view.js";
export type { KeyViewSource } from "./admin/key-view.js";
export type { KeyState, KeyView } from "./admin/schemas.js";
export { usageCsvLines, usageView } from "./admin/usage-view.js";
export type { KeyUsageView, TopKeysView } from "./admin/usage-view.js";
export type { Petstore } from "./app.js";
export type { PetstoreOptions, ResponseEvent } from "./options.js";
export type { ClientInfo } from "./http/client-address.js";
export type { Beside, BesidePage } from "./http/beside.js";
export { DEFAULT_BAN, DEFAULT_PLANS } from "./plans.js";
export type { PlanLimits } from "./plans.js";
export { GET_PET_DEPRECATED_AT, GET_PET_SUNSET_AT } from "./context.js";
export type { DeprecationDates } from "./context.js";
/** Validates `trustProxy` ranges where configuration is read, before `createPetstore` (the binary's `--trust-proxy`). */
export { trustedProxies } from "./http/ip-addresses.js";

// API keys: their format, and their life (its rules, the audit trail's words, idempotent replays).
export { generateApiKey, hashApiKey, isWellFormedApiKey } from "./keys/api-key.js";
export { issueApiKey } from "./keys/issue-api-key.js";
export { accountBucket, keyBucket, ownAccountId } from "./keys/bucket.js";
export { asksOwnLimits, createAccount, createAccountOnce, keyInAccount, updateAccount } from "./keys/account-life.js";
export type { AccountCreate, AccountInput, KeyInAccountFields } from "./keys/account-life.js";
export type { IssueApiKeyInput, IssueApiKeyOptions } from "./keys/issue-api-key.js";
export { rollApiKey } from "./keys/roll-api-key.js";
export type { KeyRoll } from "./keys/roll-api-key.js";
export { keyLife } from "./keys/key-life.js";
export { keyRecordIs } from "./keys/key-states.js";
export type {
  ChangeRequest,
  IdempotencyRefusal,
  KeyCreate,
  KeyLife,
  KeyLifeOptions,
  KeyLifeRoll,
  KeyUnban,
  NewKeyInput,
  Replayed,
} from "./keys/key-life.js";
export {
  allowFromProblem,
  expiryProblem,
  KeyRuleError,
  labelProblem,
  MAX_KEY_LIMIT,
  MAX_ROLL_OVERLAP_MS,
  newKeyProblems,
  PLAN_NAMES,
  planProblem,
  SCOPES,
  scopesProblem,
} from "./keys/rules.js";
export type { KeyFields } from "./keys/rules.js";

// Usage history: each key's requests by outcome, for a host's own charts and reports.
export { readKeyUsage, readTopKeys, TOP_KEYS, USAGE_STEPS, USAGE_WINDOWS } from "./usage/usage-history.js";
export type {
  KeyUsageHistory,
  KeyUsageQuery,
  TopKeys,
  UsageBucket,
  UsageStep,
  UsageWindow,
} from "./usage/usage-history.js";

// Implement an adapter: the ports, their constants, the errors an adapter throws.
export { bucketGroup, CLOCK_STEP_MS, IDEMPOTENCY_LEASE_MS, IDEMPOTENCY_TTL_MS, USAGE_KEPT_MS } from "./ports.js";
export type {
  AccountChange,
  AccountChanges,
  AccountInsert,
  AccountLimits,
  AccountRecord,
  AccountRules,
  Actor,
  Adapters,
  AccountListQuery,
  AdminTokenRecord,
  AdminTokens,
  ApiKeyRecord,
  ApiKeys,
  AuditAction,
  AuditEntry,
  AuditNote,
  AuditQuery,
  BanPolicy,
  BucketState,
  BucketWindows,
  ClaimedCreate,
  ClaimResult,
  Decision,
  HitInput,
  IdempotencyClaim,
  IdempotencyStore,
  KeyChange,
  KeyChanges,
  KeyUsage,
  KeyUsageTotal,
  KeyInsert,
  KeyListQuery,
  KeyOrder,
  KeyRecordState,
  NewAccountRecord,
  NewApiKeyRecord,
  PageQuery,
  PetStore,
  PlanName,
  RateLimiter,
  Scope,
  UsageCounts,
  UsageResolution,
  UsageRow,
  UsageTally,
  WindowPair,
  WindowSpec,
  WindowState,
} from "./ports.js";
export { ApiError, ERROR_STATUS, errorChain, StorageUnavailableError, toErrorResponse } from "./errors.js";
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
