import type { CallerLimits } from "../plans.js";
import type { Decision, WindowState } from "../ports.js";

/**
 * The headers of every answer, built here and nowhere else: no caching, no content sniffing,
 * the request's id, and the rate limit as the limiter decided it (or, when storage failed
 * before it could decide, honest values that invent no count).
 */

/**
 * What the rate-limit headers report: the caller's limits and the limiter's decision (times
 * counted from the instant it decided at), or `undefined` when it could not decide, with the
 * answer's `Retry-After` (one second when it has none) and this server's time.
 */
export type RateLimitState =
  | { limits: CallerLimits; decision: Decision }
  | { limits: CallerLimits; decision: undefined; retryAfter: string | undefined; now: number };

/**
 * The headers every answer carries, whatever its status: no caching, no content sniffing,
 * and the request's id. A new object per request: `answerHeaders` adds the rate-limit ones.
 */
export function standardHeaders(requestId: string): Record<string, string> {
  return { "Cache-Control": "no-store", "X-Content-Type-Options": "nosniff", "X-Request-Id": requestId };
}

/**
 * An admitted request's answer headers, in two parts: those every answer to the caller in the
 * same window carries unchanged (a `Headers` kept per limits and reported window until the
 * window resets, which a `Response` copies natively), and this answer's own (its id and what
 * remains). Bun converts a header record to its native map name by name; copying the shared
 * part and setting the own on top made a GET 5% and a POST 2-3% cheaper in CPU than one
 * record of ten.
 */
export interface AnswerHeaders {
  shared: Headers;
  own: Record<string, string>;
}

/** The headers an answer with these limits shares with others in the reported window until its reset. */
export type SharedHeaders = (limits: CallerLimits, window: WindowState, resetAt: number) => Headers;

/**
 * The headers an admitted request's answer carries, as `answerHeaders` makes them, split
 * into the part shared with the caller's other answers and the answer's own (see
 * `AnswerHeaders`). `shared` is a `sharedHeaders(ietf)`, kept for the server's life.
 */
export function admittedHeaders(
  requestId: string,
  limits: CallerLimits,
  decision: Decision,
  shared: SharedHeaders,
  ietf: boolean,
): AnswerHeaders {
  const { window, remaining, resetAt } = reported(decision);
  const own: Record<string, string> = { "X-Request-Id": requestId, "X-RateLimit-Remaining": String(remaining) };
  if (ietf) own.RateLimit = ietfRateLimit(window, remaining, resetAt, decision.now);
  if (!decision.allowed) own["Retry-After"] = String(retryAfterSeconds(decision));
  return { shared: shared(limits, window, resetAt), own };
}

/**
 * The headers every answer to a caller with given limits carries unchanged while a window is
 * the one reported: no caching, no content sniffing, JSON, the limits' `RateLimit-Policy`
 * (when `ietf`), the window's limit and its reset. Kept per limits object (a key's are kept
 * with its bucket, the anonymous ones are one object) and window, made anew when the window
 * resets (once a minute for the minute's).
 */
export function sharedHeaders(ietf: boolean): SharedHeaders {
  const kept = new WeakMap<CallerLimits, Map<string, { limit: number; resetAt: number; headers: Headers }>>();
  return (limits, window, resetAt) => {
    let windows = kept.get(limits);
    if (!windows) kept.set(limits, (windows = new Map()));
    const found = windows.get(window.name);
    if (found?.limit === window.limit && found.resetAt === resetAt) return found.headers;
    const headers = new Headers({
      "Cache-Control": "no-store",
      "X-Content-Type-Options": "nosniff",
      "Content-Type": "application/json",
    });
    headers.set("X-RateLimit-Limit", String(window.limit));
    headers.set("X-RateLimit-Reset", String(ceilSeconds(resetAt)));
    if (ietf) headers.set("RateLimit-Policy", limits.policy);
    windows.set(window.name, { limit: window.limit, resetAt, headers });
    return headers;
  };
}

/**
 * A JSON answer with an admitted request's headers and `extra` ones on top (an extra one
 * replaces a header of the same name).
 */
export function responseWith(
  body: string,
  status: number,
  headers: AnswerHeaders,
  extra?: Record<string, string>,
): Response {
  const response = new Response(body, { status, headers: headers.shared });
  const set = response.headers;
  const { own } = headers;
  for (const name in own) set.set(name, own[name]!);
  if (extra) for (const name in extra) set.set(name, extra[name]!);
  return response;
}

/**
 * The answer's headers: the standard ones, `Content-Type` (every answer of the API is JSON)
 * and the rate limit's (the IETF draft's too when `ietf`).
 */
export function answerHeaders(requestId: string, rate: RateLimitState, ietf: boolean): Record<string, string> {
  const headers = standardHeaders(requestId);
  headers["Content-Type"] = "application/json";
  if (rate.decision) addRateLimitHeaders(headers, rate.decision, rate.limits, ietf);
  else addUndecidedRateLimitHeaders(headers, rate.limits, rate.now, ietf, rate.retryAfter);
  return headers;
}

/**
 * The window the headers describe: on a refusal the refusing window that resets last (the
 * one whose reset admits the request); otherwise the one with the fewest requests left, on a
 * tie the one that resets later.
 */
function reportedWindow(decision: Decision): WindowState {
  // A loop rather than filter and reduce: this runs on every request.
  const refusing = !decision.allowed && decision.windows.some((w) => w.exceeded);
  let best: WindowState | undefined;
  for (const w of decision.windows) {
    if (refusing && !w.exceeded) continue;
    if (!best) best = w;
    else if (!decision.allowed) best = w.resetAt > best.resetAt ? w : best;
    else if (w.remaining !== best.remaining) best = w.remaining < best.remaining ? w : best;
    else best = w.resetAt > best.resetAt ? w : best;
  }
  return best!;
}

/**
 * Which bucket of a hit with shared buckets the headers report: 0 for the hit's own (always
 * during its ban), k + 1 for `decision.shared[k]`. The binding one: the bucket holding the
 * window `reportedWindow` picks among the windows of them all (fewest left, on a tie the one
 * that resets later; on a refusal the refusing window that resets last).
 */
export function bindingBucket(decision: Decision): number {
  const { shared } = decision;
  if (!shared || decision.bannedUntil !== undefined) return 0;
  const window = reportedWindow({ ...decision, windows: [...decision.windows, ...shared.flat()] });
  if (decision.windows.includes(window)) return 0;
  return shared.findIndex((windows) => windows.includes(window)) + 1;
}

const ceilSeconds = (ms: number) => Math.ceil(ms / 1000);

/**
 * Seconds until a refused request would be admitted, from the instant the limiter decided at:
 * RFC 9110 delta-seconds, at least 1.
 */
export function retryAfterSeconds(decision: Decision): number {
  const until = decision.bannedUntil ?? reportedWindow(decision).resetAt;
  return Math.max(1, ceilSeconds(until - decision.now));
}

/**
 * The window the rate-limit headers report, what remains of it and when it resets: during a
 * ban the first window (the minute, where a ban is earned), nothing remaining, and a reset no
 * earlier than the ban's end.
 */
function reported(decision: Decision): { window: WindowState; remaining: number; resetAt: number } {
  if (decision.bannedUntil === undefined) {
    const window = reportedWindow(decision);
    return { window, remaining: window.remaining, resetAt: window.resetAt };
  }
  const window = decision.windows[0]!;
  return { window, remaining: 0, resetAt: Math.max(window.resetAt, decision.bannedUntil) };
}

/** The IETF draft's `RateLimit`: the window, what remains, seconds until the reset from the limiter's instant. */
const ietfRateLimit = (window: WindowState, remaining: number, resetAt: number, now: number) =>
  `"${window.name}";r=${remaining};t=${Math.max(0, ceilSeconds(resetAt - now))}`;

/**
 * Adds `X-RateLimit-*`, the IETF draft `RateLimit`/`RateLimit-Policy` and, on a refusal,
 * `Retry-After` (written into, not copied).
 */
function addRateLimitHeaders(
  headers: Record<string, string>,
  decision: Decision,
  limits: CallerLimits,
  ietf: boolean,
): void {
  const { window, remaining, resetAt } = reported(decision);
  headers["X-RateLimit-Limit"] = String(window.limit);
  headers["X-RateLimit-Remaining"] = String(remaining);
  headers["X-RateLimit-Reset"] = String(ceilSeconds(resetAt));
  if (ietf) {
    headers["RateLimit-Policy"] = limits.policy;
    headers.RateLimit = ietfRateLimit(window, remaining, resetAt, decision.now);
  }
  if (!decision.allowed) headers["Retry-After"] = String(retryAfterSeconds(decision));
}

/**
 * The rate-limit headers when the limiter could not decide: the caller's limit of the first
 * window (the anonymous one's when no key was identified), nothing remaining, and a reset no
 * earlier than the answer's `Retry-After`.
 */
function addUndecidedRateLimitHeaders(
  headers: Record<string, string>,
  limits: CallerLimits,
  now: number,
  ietf: boolean,
  retryAfter = "1",
): void {
  const window = limits.windows[0]!;
  const waitSeconds = Math.max(1, Number(retryAfter) || 1);
  headers["X-RateLimit-Limit"] = String(window.limit);
  headers["X-RateLimit-Remaining"] = "0";
  headers["X-RateLimit-Reset"] = String(ceilSeconds(now) + waitSeconds);
  if (ietf) {
    headers["RateLimit-Policy"] = limits.policy;
    headers.RateLimit = `"${window.name}";r=0;t=${waitSeconds}`;
  }
}

/**
 * What an answer to a rolled key's old secret adds: RFC 9745's `Deprecation` (the roll's
 * instant), RFC 8594's `Sunset` (when the old secret stops working) and, when the operator
 * names a page about it, a `Link` with `rel="deprecation"`. On `getPet`, whose route has its
 * own, the key's `Deprecation` and `Sunset` replace the route's (the credential's end comes
 * first) and its `Link` joins the route's.
 */
export function rolledKeyHeaders(
  rolled: { at: number; until: number },
  link: string | undefined,
): Record<string, string> {
  const headers: Record<string, string> = {
    Deprecation: `@${Math.floor(rolled.at / 1000)}`,
    Sunset: new Date(rolled.until).toUTCString(),
  };
  if (link !== undefined) headers.Link = `<${link}>; rel="deprecation"`;
  return headers;
}
