import * as v from "valibot";
import { ApiError } from "../errors.js";
import type { Page } from "../pet-page-cache.js";
import type { PageQuery } from "../ports.js";
import { DEFAULT_LIMIT, type ErrorDetail, IdSchema, LimitSchema } from "../schemas.js";
import type { Context } from "../context.js";
import { serialized } from "./_respond.js";

/**
 * Cursor paging shared by the list operations: `limit`, an optional `status` filter and an
 * opaque `cursor`, with the next page announced in an RFC 8288 `Link` header.
 */

const CURSOR_PREFIX = "after:";

function encodeCursor(lastId: number): string {
  return btoa(CURSOR_PREFIX + lastId)
    .replace(/=+$/, "")
    .replace(/\+/g, "-")
    .replace(/\//g, "_");
}

function decodeCursor(cursor: string): number | undefined {
  let text: string;
  try {
    text = atob(cursor.replace(/-/g, "+").replace(/_/g, "/"));
  } catch {
    return undefined;
  }
  if (!text.startsWith(CURSOR_PREFIX)) return undefined;
  const digits = text.slice(CURSOR_PREFIX.length);
  const id = /^[1-9][0-9]{0,15}$/.test(digits) ? Number(digits) : Number.NaN;
  return v.is(IdSchema, id) ? id : undefined;
}

/**
 * The query string of a request URL, without parsing the whole URL (this runs on every list
 * request, and most carry no query at all).
 */
function searchParamsOf(url: string): URLSearchParams | undefined {
  const start = url.indexOf("?");
  if (start === -1) return undefined;
  const end = url.indexOf("#", start);
  return new URLSearchParams(end === -1 ? url.slice(start + 1) : url.slice(start + 1, end));
}

/** The single value of a query parameter; repeated or empty values are problems. */
function single(params: URLSearchParams, name: string, problems: ErrorDetail[]): string | undefined {
  const values = params.getAll(name);
  if (values.length === 0) return undefined;
  if (values.length > 1) problems.push({ path: name, message: "must not be repeated" });
  else if (values[0] === "") problems.push({ path: name, message: "must not be empty" });
  else return values[0];
  return undefined;
}

/**
 * Parses `limit`, `status` and `cursor` of a request URL; unknown parameters are ignored.
 * Every problem is listed in `details`, as for a body; the message names the first.
 */
export function readPageQuery<S extends string>(
  url: string,
  statusSchema: v.PicklistSchema<readonly S[], string>,
): PageQuery<S> {
  const params = searchParamsOf(url);
  if (params === undefined || params.size === 0) return { limit: DEFAULT_LIMIT };
  const problems: ErrorDetail[] = [];
  const query: PageQuery<S> = { limit: DEFAULT_LIMIT };
  const limit = single(params, "limit", problems);
  if (limit !== undefined) {
    const value = /^-?[0-9]{1,16}$/.test(limit) ? Number(limit) : Number.NaN;
    if (v.is(LimitSchema, value)) query.limit = value;
    else problems.push({ path: "limit", message: `must be an integer from 1 to 100 (got '${limit}')` });
  }
  const status = single(params, "status", problems);
  if (status !== undefined) {
    if (v.is(statusSchema, status)) query.status = status;
    else
      problems.push({ path: "status", message: `must be one of ${statusSchema.options.join(", ")} (got '${status}')` });
  }
  const cursor = single(params, "cursor", problems);
  if (cursor !== undefined) {
    const afterId = decodeCursor(cursor);
    if (afterId === undefined) problems.push({ path: "cursor", message: "is not a cursor this service issued" });
    else query.afterId = afterId;
  }
  const [first] = problems;
  if (first === undefined) return query;
  const more = problems.length > 1 ? `; ${problems.length - 1} more in details` : "";
  throw new ApiError("invalid_parameter", `Query parameter '${first.path}' ${first.message}${more}`, problems);
}

/**
 * Answers one page. The store is asked for one row more than the page holds: its presence
 * says whether a next page exists without a second query.
 */
export async function respondWithPage<T extends { id: number }, S extends string>(
  ctx: Context,
  path: string,
  query: PageQuery<S>,
  fetchPage: (query: PageQuery<S>) => Promise<Page<T>>,
): Promise<Response> {
  const page = await fetchPage({ ...query, limit: query.limit + 1 });
  const { rows } = page;
  const body = pageJson(page, query.limit);
  if (rows.length <= query.limit) return serialized(ctx, body);
  const next = new URLSearchParams({ limit: String(query.limit) });
  if (query.status !== undefined) next.set("status", query.status);
  next.set("cursor", encodeCursor(rows[query.limit - 1]!.id));
  return serialized(ctx, body, 200, { Link: `<${ctx.basePath}${path}?${next}>; rel="next"` });
}

/** The JSON of the first `limit` rows; made once for a kept page (its query, so its limit, never changes). */
function pageJson(page: Page<object>, limit: number): string {
  if (page.json !== undefined) return page.json;
  const json = JSON.stringify(page.rows.length > limit ? page.rows.slice(0, limit) : page.rows);
  if (page.kept) page.json = json;
  return json;
}
