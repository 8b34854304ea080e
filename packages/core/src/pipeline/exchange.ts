import type { ErrorCode } from "../errors.js";
import type { Identity } from "./identify-caller.js";
import { pathnameOf } from "./pathname.js";
import type { CallerLimits } from "./rate-limit.js";
import { requestIdOf } from "./request-id.js";
import { standardHeaders } from "./standard-headers.js";

/** What the host knows about the connection. */
export interface ClientInfo {
  /** The socket's remote address; names the rate-limit bucket of anonymous callers. */
  clientAddress?: string | undefined;
}

/**
 * One request on its way through the stages: what each stage found, for the next ones and for
 * `onResponse`. Every field is set here, so each exchange has the same shape.
 */
export interface Exchange {
  request: Request;
  /** Read only for callers without a valid key: a host may look the address up lazily. */
  info: ClientInfo | undefined;
  requestId: string;
  pathname: string;
  /** Unix ms of this request, from the injected clock. */
  now: number;
  /** `performance.now()` when the request arrived. */
  started: number;
  /** The answer's headers so far: the standard ones, then the rate-limit ones. */
  headers: Record<string, string>;
  identity: Identity | undefined;
  /** The client's address, when it named the bucket (a caller without a valid key). */
  client: string | undefined;
  bucket: string;
  limits: CallerLimits | undefined;
  errorCode: ErrorCode | undefined;
  banStarted: boolean;
  aborted: boolean;
}

/** The first stage: the request's id, its path and the headers every answer carries. */
export function beginExchange(request: Request, info: ClientInfo | undefined, now: number): Exchange {
  const requestId = requestIdOf(request);
  return {
    request,
    info,
    requestId,
    pathname: pathnameOf(request.url),
    now,
    started: performance.now(),
    headers: standardHeaders(requestId),
    identity: undefined,
    client: undefined,
    bucket: "",
    limits: undefined,
    errorCode: undefined,
    banStarted: false,
    aborted: false,
  };
}
