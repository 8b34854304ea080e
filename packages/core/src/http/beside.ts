import { ApiError, toErrorResponse } from "../errors.js";
import { standardHeaders } from "./answer-headers.js";

/** A page a host serves beside an API: the answer to its `GET` (its `HEAD` is the same without a body). */
export type BesidePage = (request: Request) => Response | Promise<Response>;

/**
 * What a host serves beside an API, outside its base path (`/healthz`, a reference page): the
 * page at a path, or undefined for none.
 * @example const beside: Beside = (pathname) => (pathname === "/healthz" ? () => Response.json({ status: "ok" }) : undefined);
 */
export type Beside = (pathname: string) => BesidePage | undefined;

/** Whether a path is the base path or under it (every path is under `""`). */
export function isUnder(basePath: string, pathname: string): boolean {
  return basePath === "" || pathname === basePath || pathname.startsWith(`${basePath}/`);
}

/**
 * The answer to a path outside the base path when the host serves paths beside the API: its
 * page (`GET` and `HEAD` only, else `405`), or `404`; every answer with the request's id and
 * the headers every answer carries. Neither limited nor authenticated: what a host serves
 * there must answer when the API cannot. The caller drops the body of a `HEAD`.
 */
export async function answerBeside(
  beside: Beside,
  request: Request,
  requestId: string,
  pathname: string,
): Promise<Response> {
  const headers = standardHeaders(requestId);
  const page = beside(pathname);
  if (page === undefined) return toErrorResponse(new ApiError("not_found", `No resource at ${pathname}`), headers);
  if (request.method !== "GET" && request.method !== "HEAD") {
    return toErrorResponse(
      new ApiError("method_not_allowed", `${request.method} is not allowed on ${pathname}`, undefined, {
        Allow: "GET, HEAD",
      }),
      headers,
    );
  }
  // Copied: a page's own headers may be immutable (Response.redirect, an answer of fetch passed through).
  const answer = await page(request);
  const response = new Response(answer.body, answer);
  for (const [name, value] of Object.entries(headers)) response.headers.set(name, value);
  return response;
}
