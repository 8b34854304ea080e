export { createPetstore } from "./app.js";
export type { ClientInfo, Petstore, PetstoreOptions, ResponseEvent } from "./app.js";
export { formatApiKey, hashApiKey, isWellFormedApiKey, issueApiKey, randomBase62 } from "./api-keys.js";
export type { IssueApiKeyInput, IssueApiKeyOptions } from "./api-keys.js";
export { GET_PET_DEPRECATED_AT, GET_PET_SUNSET_AT } from "./context.js";
export type { Context, DeprecationDates, Handler } from "./context.js";
export { ApiError, ERROR_STATUS, StorageUnavailableError, toApiError, toErrorResponse } from "./errors.js";
export type { ErrorCode } from "./errors.js";
export { createPet, MAX_BODY_BYTES } from "./handlers/create-pet.js";
export { getPet } from "./handlers/get-pet.js";
export { listOrders } from "./handlers/list-orders.js";
export { listPets } from "./handlers/list-pets.js";
export { openApiDocument } from "./openapi.js";
export { cachePetPages } from "./pet-page-cache.js";
export { trustedProxies } from "./pipeline/client-address.js";
export { headResponse } from "./pipeline/head-response.js";
export { DEFAULT_BAN, DEFAULT_PLANS } from "./pipeline/rate-limit.js";
export type { PlanLimits } from "./pipeline/rate-limit.js";
export { IDEMPOTENCY_LEASE_MS, IDEMPOTENCY_TTL_MS } from "./ports.js";
export type {
  ApiKeyRecord,
  ApiKeys,
  BanPolicy,
  ClaimResult,
  Decision,
  HitInput,
  IdempotencyClaim,
  IdempotencyStore,
  PageQuery,
  PetStore,
  PlanName,
  RateLimiter,
  WindowSpec,
  WindowState,
} from "./ports.js";
export { ROUTES } from "./routes.js";
export {
  DEFAULT_LIMIT,
  MAX_ID,
  NewOrderSchema,
  NewPetSchema,
  ORDER_STATUSES,
  OrderSchema,
  PET_STATUSES,
  PetSchema,
} from "./schemas.js";
export type { ErrorBody, ErrorDetail, NewOrder, NewOrderInput, NewPet, Order, OrderStatus, Pet, PetStatus } from "./schemas.js";
