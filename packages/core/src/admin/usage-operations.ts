import { ApiError } from "../errors.js";
import { accountKeyIds } from "../keys/account-life.js";
import {
  readKeysUsage,
  readKeyUsage,
  readTopKeys,
  USAGE_STEPS,
  USAGE_WINDOWS,
  type UsageHistory,
  type UsageStep,
  type UsageWindow,
} from "../usage/usage-history.js";
import { type AdminDeps, type Call, choice, type Outcome, queryParameter } from "./operations.js";
import { instantOf } from "./schemas.js";
import { accountUsageView, topKeysView, usageCsvLines, usageView } from "./usage-view.js";

/** A query parameter that is an ISO 8601 instant with its offset, as Unix ms, or undefined when not given. */
function instant(url: URL, name: string): number | undefined {
  const value = queryParameter(url, name);
  if (value === undefined) return undefined;
  const at = instantOf(value);
  if (at !== undefined) return at;
  const message = "must be an ISO 8601 date and time with its offset, e.g. 2027-01-31T00:00:00Z";
  throw new ApiError("invalid_parameter", `Query parameter '${name}' ${message}`, [{ path: name, message }]);
}

/** Whether the client asked for CSV: `text/csv` in its `Accept`, not refused (`q=0`) nor ranked below JSON. */
function wantsCsv(request: Request): boolean {
  const accept = request.headers.get("accept");
  if (accept === null) return false;
  const quality = (type: string) => {
    const range = accept
      .split(",")
      .map((part) => part.trim().toLowerCase())
      .find((part) => part === type || part.startsWith(`${type};`));
    if (range === undefined) return undefined;
    const q = /;\s*q=([\d.]+)/.exec(range)?.[1];
    return q === undefined ? 1 : Number(q);
  };
  const csv = quality("text/csv");
  return csv !== undefined && csv > 0 && csv >= (quality("application/json") ?? 0);
}

/** The span and step a usage request asks for (`from`, `to`, `step`), read at the admin's clock. */
function usageQuery(call: Call, deps: AdminDeps) {
  const step = choice<UsageStep>(call.url, "step", USAGE_STEPS);
  const from = instant(call.url, "from");
  const to = instant(call.url, "to");
  return {
    now: deps.clock(),
    ...(step !== undefined && { step }),
    ...(from !== undefined && { from }),
    ...(to !== undefined && { to }),
  };
}

/** Usage as JSON (`view`), or as CSV when the client asks for it. */
function usageAnswer(call: Call, history: UsageHistory, view: () => unknown): Outcome {
  if (!wantsCsv(call.request)) return { status: 200, body: view() };
  return {
    status: 200,
    body: `${usageCsvLines(history).join("\r\n")}\r\n`,
    headers: { "Content-Type": "text/csv; charset=utf-8", Vary: "Accept" },
  };
}

export const usageOperations = {
  /**
   * `GET /keys/{id}/usage?from=&to=&step=minute|hour|day`: the key's usage by outcome, every
   * bucket of the span; `Accept: text/csv` answers it as CSV.
   */
  async keyUsage(call: Call, deps: AdminDeps): Promise<Outcome> {
    const query = usageQuery(call, deps);
    if (!(await deps.keys.get(call.id))) throw new ApiError("not_found", `No API key has the id ${call.id}`);
    const history = await readKeyUsage(deps.keys, call.id, query);
    return usageAnswer(call, history, () => usageView(history));
  },

  /**
   * `GET /accounts/{id}/usage?from=&to=&step=minute|hour|day`: its keys' usage (every key,
   * every outcome) summed, as a key's is answered; `Accept: text/csv` answers it as CSV.
   */
  async accountUsage(call: Call, deps: AdminDeps): Promise<Outcome> {
    const query = usageQuery(call, deps);
    if (!(await deps.keys.getAccount(call.id))) throw new ApiError("not_found", `No account has the id ${call.id}`);
    const keyIds = await accountKeyIds(deps.keys, call.id);
    const history = await readKeysUsage(deps.keys, keyIds, query);
    return usageAnswer(call, history, () => accountUsageView(call.id, keyIds, history));
  },

  /** `GET /usage/top?window=1h|24h|30d&by=requests|refusals`: the 20 keys that used the most, with their labels. */
  async topUsage(call: Call, deps: AdminDeps): Promise<Outcome> {
    const window = choice<UsageWindow>(call.url, "window", USAGE_WINDOWS);
    const by = choice(call.url, "by", ["requests", "refusals"] as const);
    const top = await readTopKeys(deps.keys, {
      now: deps.clock(),
      ...(window !== undefined && { window }),
      ...(by !== undefined && { by }),
    });
    const records = await Promise.all(top.keys.map((total) => deps.keys.get(total.keyId)));
    const labels = new Map(top.keys.map((total, i) => [total.keyId, records[i]?.label]));
    return { status: 200, body: topKeysView(top, labels) };
  },
};
