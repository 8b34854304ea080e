import type { PetPages } from "./pet-page-cache.js";
import type { AnswerHeaders } from "./http/answer-headers.js";
import type { ApiKeyRecord, IdempotencyStore, PetStore } from "./ports.js";

/** RFC 9745 / RFC 8594 dates of the deprecated `getPet` route, in Unix ms. */
export interface DeprecationDates {
  deprecatedAt: number;
  sunsetAt: number;
}

/** 1 January 2026 00:00 UTC: when `getPet` was deprecated. */
export const GET_PET_DEPRECATED_AT = Date.UTC(2026, 0, 1);
/** 5 December 2030 00:00 UTC: when `getPet` is removed (specification section 4.3). */
export const GET_PET_SUNSET_AT = Date.UTC(2030, 11, 5);

/** What a handler gets besides the request. `createPetstore` builds one per request. */
export interface Context {
  store: PetStore;
  /** The pet list's pages, kept while no pet changes (see `petPages`). */
  petPages: PetPages;
  idempotency: IdempotencyStore;
  /** Path parameters, copied in by the router. */
  params: Record<string, string>;
  /** The authenticated key; absent when a handler is mounted without the auth stage. */
  caller?: ApiKeyRecord;
  /** Unix ms of this request: the instant the limiter decided it at, by its store's clock. */
  now: number;
  /** Where the API is mounted, e.g. "/v1"; links and `Location` are built under it. */
  basePath: string;
  deprecation: DeprecationDates;
  /** Headers every answer carries (rate limits, request id, caching, `Content-Type`): `admittedHeaders`. */
  headers: AnswerHeaders;
  /** How long the request's body may take to arrive once read (`bodyTimeoutMs`). */
  bodyTimeoutMs: number;
}

/** An operation: a pure function of the request and its context. */
export type Handler = (request: Request, ctx: Context) => Promise<Response>;
