import { checkOptions } from "./_options-check.js";
import { type PetPages, petPages } from "./pet-page-cache.js";
import type { ErrorCode } from "./errors.js";
import type { Beside } from "./http/beside.js";
import { type DeprecationDates, GET_PET_DEPRECATED_AT, GET_PET_SUNSET_AT } from "./context.js";
import { trustedProxies } from "./http/ip-addresses.js";
import { type UsageRecorder, usageRecorder } from "./usage/usage-recorder.js";
import { type CallerLimits, DEFAULT_BAN, DEFAULT_PLANS, limitsResolver, type PlanLimits } from "./plans.js";
import type {
  Adapters,
  AccountLimits,
  ApiKeys,
  BanPolicy,
  IdempotencyStore,
  PetStore,
  PlanName,
  RateLimiter,
} from "./ports.js";

export interface PetstoreOptions extends Adapters {
  /**
   * Where the API is mounted, as the path the requests arrive with: `/v1` (the default),
   * `/api/petstore`, or `""` for the root. A trailing slash is dropped.
   */
  basePath?: string;
  /** Overrides of the plans' numbers; the specification's table is the default. */
  plans?: Partial<Record<PlanName, PlanLimits>>;
  /** Default: more than 30 refusals within one minute window bans the bucket for 600 s. */
  ban?: Partial<BanPolicy>;
  /**
   * This server's clock, Unix ms: for the headers of a 503 when the limiter could not decide.
   * Windows, bans, expiries and the sunset date follow the adapters' clock, which is their
   * store's (see each adapter's `clock` option, for tests). Default `Date.now`.
   */
  clock?: () => number;
  /**
   * A monotonic clock, ms: what this process measures alone runs on it (how long a verified
   * key is kept, how long the latest uses wait to be written, a request's duration), so that a
   * step of the wall clock (NTP correcting it) moves none of it. Default `performance.now`;
   * tests move their own.
   */
  monotonicClock?: () => number;
  /** Proxies (CIDR ranges) whose `X-Forwarded-For` is believed. Default: none. */
  trustProxy?: readonly string[];
  /** Send the IETF draft `RateLimit` and `RateLimit-Policy` headers. Default true. */
  ietfRateLimitHeaders?: boolean;
  /** How long a verified key is trusted before storage is asked again. Default 5000 ms. */
  keyCacheMs?: number;
  /**
   * How long a request body may take to arrive once its handler reads it; past it the answer
   * is `408 request_timeout` with `Connection: close`, so that a client that never finishes
   * its body holds no connection for ever. Default 30000 ms.
   */
  bodyTimeoutMs?: number;
  /**
   * A page that tells a client how to take its key's new secret: sent as
   * `Link: <url>; rel="deprecation"` with every answer to a rolled key's old secret (beside
   * `Deprecation` and `Sunset`). Default: none.
   */
  rolledKeyLink?: string;
  /** Dates of the deprecated `getPet`; default 1 Jan 2026 and 5 Dec 2030. */
  deprecation?: Partial<DeprecationDates>;
  /**
   * What the host serves beside the API, outside its base path (a health check, a reference
   * page): for a path, the handler of its `GET`, or undefined for none. Those answers go through
   * the API's edge (the request id, the headers every answer carries, `405` for another method,
   * `HEAD` without a body, `onResponse`) but are neither rate-limited nor authenticated; any
   * other path outside the base path is a `404`. Without it, every path goes through the API's stages.
   */
  beside?: Beside;
  /**
   * Count each key's requests by outcome (admitted, rate limited, banned, unauthorized) and
   * add them to `keys` with the keys' last uses, at least every 10 s (`Petstore.flush` adds
   * them now). Default true; false records neither, for a host that keeps its own.
   */
  recordUsage?: boolean;
  /** Called with every unexpected error (the client only sees `internal_error`). */
  onError?: (error: unknown, requestId: string) => void;
  /** Called once per answer, before it is returned: for access logs and metrics. */
  onResponse?: (event: ResponseEvent) => void;
}

/** What an access log may know of an answer; never key material, the key's id at most. */
export interface ResponseEvent {
  request: Request;
  response: Response;
  requestId: string;
  /** The request's path, without its query (not percent-decoded). */
  pathname: string;
  /** The authenticated key's id; absent for anonymous or rejected callers. */
  keyId?: string;
  /** The client's address, when it was needed: the rate-limit bucket of a caller without a valid key. */
  clientAddress?: string;
  /** Milliseconds from `fetch` being called to the answer. */
  durationMs: number;
  /**
   * For metrics, bounded values only. `route`: the pattern of the route the path matches
   * (`/pets/:petId`), or `/openapi.json`, whatever the answer (a 401 or 429 too); absent for
   * a path no route serves.
   */
  route?: string;
  /** The identified caller's plan; absent for callers without a valid key (limited as Free). */
  plan?: PlanName;
  /** The error code, when the answer is an error (`rate_limited`, `unauthorized`, ...). */
  errorCode?: ErrorCode;
  /** `hit`: the key was verified from the key cache; `miss`: storage was asked. Absent when no well-formed key was sent. */
  keyCache?: "hit" | "miss";
  /** True on the refusal that began a ban (the limiter says so: once per ban, across a fleet). */
  banStarted?: true;
  /** The client closed the connection before its request body arrived: it is unlikely to read the answer. */
  aborted?: true;
}

/** `PetstoreOptions` with every default applied: what the stages read. */
export interface Settings {
  store: PetStore;
  petPages: PetPages;
  keys: ApiKeys;
  limiter: RateLimiter;
  idempotency: IdempotencyStore;
  /** Without a trailing slash: `/v1`, or `""` at the root. */
  basePath: string;
  limitsOf: (caller: AccountLimits | undefined) => CallerLimits;
  ban: BanPolicy;
  clock: () => number;
  monotonicClock: () => number;
  isTrustedProxy: ((address: string) => boolean) | undefined;
  ietfRateLimitHeaders: boolean;
  keyCacheMs: number;
  rolledKeyLink: string | undefined;
  bodyTimeoutMs: number;
  deprecation: DeprecationDates;
  beside: Beside | undefined;
  /** The keys' usage counts waiting for the store; undefined when not recorded. */
  usage: UsageRecorder | undefined;
  onError: (error: unknown, requestId: string) => void;
  onResponse: ((event: ResponseEvent) => void) | undefined;
}

/**
 * The default `onError`: one JSON line on stderr with the time, the cause's message and code
 * (a driver's `SQLITE_CORRUPT`, say) and its cause's, then the stack, which in a compiled
 * binary names only minified frames.
 */
function logError(error: unknown, requestId: string): void {
  const described = (thrown: unknown) => {
    if (!(thrown instanceof Error)) return { message: String(thrown) };
    const code = (thrown as { code?: unknown }).code;
    return { message: thrown.message, ...(typeof code === "string" || typeof code === "number" ? { code } : {}) };
  };
  const cause = error instanceof Error && error.cause !== undefined ? { cause: described(error.cause) } : {};
  const stack = error instanceof Error && error.stack !== undefined ? { stack: error.stack } : {};
  console.error(
    JSON.stringify({
      time: new Date().toISOString(),
      level: "error",
      requestId,
      ...described(error),
      ...cause,
      ...stack,
    }),
  );
}

/** The mount point without its trailing slash; throws on one no request path could start with. */
function basePathOf(basePath: string): string {
  const trimmed = basePath.replace(/\/+$/, "");
  if (trimmed !== "" && !/^(\/[A-Za-z0-9._~!$&'()*+,;=:@%-]+)+$/.test(trimmed)) {
    throw new TypeError(
      `basePath must be "" or a path that starts with "/" (e.g. "/api/petstore"), not ${JSON.stringify(basePath)}`,
    );
  }
  return trimmed;
}

/** A duration that can time something out: a positive number of milliseconds. */
function positiveMs(ms: number, name: string): number {
  if (!(Number.isFinite(ms) && ms > 0))
    throw new TypeError(`${name} must be a positive number of milliseconds, not ${ms}`);
  return ms;
}

/** Where a `createPetstore` gets its four ports, said when one is missing. */
const ADAPTERS_FIX =
  "memoryAdapters() gives all four, as do libsqlAdapters(db), postgresAdapters({ sql }) and d1Adapters(env.DB)";

/** Every default of `createPetstore`, in one place; throws a `TypeError` on a missing port or a malformed option. */
export function resolveOptions(options: PetstoreOptions): Settings {
  checkOptions(
    "createPetstore",
    options,
    {
      store: ["listPets", "getPet", "createPet", "createClaimedPet", "listOrders", "createOrder"],
      keys: ["findByHash", "addUsage"],
      limiter: ["hit"],
      idempotency: ["claim", "release"],
    },
    ADAPTERS_FIX,
  );
  const monotonicClock = options.monotonicClock ?? (() => performance.now());
  return {
    store: options.store,
    // Pages of pets kept while the store says no pet changed (when it can say so).
    petPages: petPages(options.store),
    keys: options.keys,
    limiter: options.limiter,
    idempotency: options.idempotency,
    basePath: basePathOf(options.basePath ?? "/v1"),
    limitsOf: limitsResolver({ ...DEFAULT_PLANS, ...options.plans }),
    ban: { ...DEFAULT_BAN, ...options.ban },
    clock: options.clock ?? Date.now,
    monotonicClock,
    isTrustedProxy: options.trustProxy?.length ? trustedProxies(options.trustProxy) : undefined,
    ietfRateLimitHeaders: options.ietfRateLimitHeaders ?? true,
    keyCacheMs: options.keyCacheMs ?? 5_000,
    rolledKeyLink: options.rolledKeyLink,
    bodyTimeoutMs: positiveMs(options.bodyTimeoutMs ?? 30_000, "bodyTimeoutMs"),
    deprecation: { deprecatedAt: GET_PET_DEPRECATED_AT, sunsetAt: GET_PET_SUNSET_AT, ...options.deprecation },
    beside: options.beside,
    usage: options.recordUsage === false ? undefined : usageRecorder(options.keys, monotonicClock),
    onError: options.onError ?? logError,
    onResponse: options.onResponse,
  };
}
