/**
 * `@petstore/core/internal`: what `@petstore/server` shares with core's pipeline to answer
 * the paths beside the API (`/healthz`, `/docs`, `/metrics`) as the API answers: the request
 * id, the headers every answer carries, `HEAD` without a body. Not a public API: it may change
 * in any release. A host mounting the API needs none of it (`createPetstore` does all this).
 * The adapters' tests of `petsVersion` list through core's page cache with `petPages`.
 */
export { standardHeaders } from "./pipeline/answer-headers.js";
export { headResponse } from "./pipeline/head-response.js";
export { pathnameOf } from "./pipeline/pathname.js";
export { requestIdOf } from "./pipeline/request-id.js";
export { petPages } from "./pet-page-cache.js";
