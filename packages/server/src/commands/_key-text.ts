import { type ApiKeyRecord, type KeyView, SCOPES } from "@petstore/core";

/** How the keys commands print for a person (their `--json` prints the views as they are). */

/** An ISO instant to the second, as a person reads it: `2027-01-31T00:00:00Z`. */
export function shortTime(iso: string | null): string {
  return iso === null ? "-" : iso.replace(/\.\d{3}Z$/, "Z");
}

/** Rows as columns two spaces apart, each as wide as its widest cell. */
export function table(rows: string[][]): string[] {
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)));
  return rows.map((row) =>
    row
      .map((cell, column) => cell.padEnd(widths[column]!))
      .join("  ")
      .trimEnd(),
  );
}

/** Every state the key is in (`active,rolling,banned`); `banned?` when the limiter cannot say. */
export function stateCell(view: KeyView): string {
  return [...view.states, ...(view.usage === null ? ["banned?"] : [])].join(",");
}

/** The key's scopes (`pets:read,orders:read`), or `all` for a key with every scope. */
export function scopesCell(view: KeyView): string {
  return view.scopes.length === SCOPES.length ? "all" : view.scopes.join(",");
}

/** The ranges the key's requests must come from, or `any`. */
export function allowFromCell(view: KeyView): string {
  return view.allowFrom === null ? "any" : view.allowFrom.join(",");
}

/** `used/limit` of today, or `?` when the limiter cannot say. */
export function todayCell(view: KeyView): string {
  return view.usage ? `${view.usage.day.used}/${view.usage.day.limit}` : "?";
}

/**
 * `keys show` for a person: one line a field. `record` says which limits are the key's own;
 * `now` (the limiter's instant when it said, else this machine's) whether it expired; `program`
 * names this program as it runs, for the command a line suggests.
 */
export function detailLines(
  view: KeyView,
  record: ApiKeyRecord,
  now: number,
  noLimiter: string | undefined,
  program: string,
): string[] {
  const own = (value: number | undefined) => (value === undefined ? "the plan's" : "set for this key");
  const expires =
    view.expiresAt === null
      ? "never"
      : `${shortTime(view.expiresAt)}${Date.parse(view.expiresAt) <= now ? " (expired: refused since then)" : ""}`;
  const rolling =
    view.rolling === null
      ? "no"
      : `the old secret works until ${shortTime(view.rolling.until)} (rolled at ${shortTime(view.rolling.since)}), its answers saying so`;
  const usage = view.usage;
  const unknown = `unknown (${noLimiter ?? "the limiter cannot say"})`;
  const fields: [string, string][] = [
    ["ID", view.id],
    ["State", stateCell(view).replaceAll(",", ", ")],
    ["Plan", view.plan],
    ["Per minute", `${view.perMinute} (${own(record.perMinute)})`],
    ["Per day", `${view.perDay} (${own(record.perDay)})`],
    ["Label", view.label ?? "-"],
    ["Scopes", scopesCell(view).replaceAll(",", ", ")],
    ["Allow from", view.allowFrom === null ? "any address" : allowFromCell(view).replaceAll(",", ", ")],
    ["Created", shortTime(view.createdAt)],
    ["Expires", expires],
    [
      "Last used",
      view.lastUsedAt === null
        ? "never (the servers write uses within 10 s)"
        : `${shortTime(view.lastUsedAt)} (written within 10 s)`,
    ],
    ["Rolling", rolling],
    [
      "This minute",
      usage ? `${usage.minute.used} of ${usage.minute.limit} (until ${shortTime(usage.minute.resetAt)})` : unknown,
    ],
    [
      "Today",
      usage ? `${usage.day.used} of ${usage.day.limit} (until ${shortTime(usage.day.resetAt)}, UTC days)` : unknown,
    ],
    [
      "Banned",
      usage
        ? usage.bannedUntil === null
          ? "no"
          : `until ${shortTime(usage.bannedUntil)} (lift it: ${program} keys unban ${view.id})`
        : unknown,
    ],
    ["Revoked", view.revokedAt === null ? "no" : shortTime(view.revokedAt)],
  ];
  const width = Math.max(...fields.map(([name]) => name.length));
  return fields.map(([name, value]) => `${name.padEnd(width)}  ${value}`);
}
