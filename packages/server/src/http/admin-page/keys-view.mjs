// The keys: filtered by state and plan, sorted, searched, a page at a time; a new key made here.
// Its table and its new key's dialog serve an account's page too.

import { call } from "./api.mjs";
import {
  cardRow,
  field,
  fieldProblems,
  fill,
  h,
  open,
  PLANS,
  pagedTable,
  planFields,
  planText,
  refused,
  select,
  showSecret,
  states,
  time,
  utcOf,
} from "./ui.mjs";

const STATES = [
  ["", "Any state"],
  ["active", "Active"],
  ["rolling", "Rolling"],
  ["banned", "Banned"],
  ["expired", "Expired"],
  ["revoked", "Revoked"],
];
const SORTS = [
  ["created", "Oldest first"],
  ["lastUsed", "Last used"],
  ["today", "Most used today"],
];

function row(key) {
  const today = key.usage
    ? [
        h("meter", {
          min: 0,
          max: key.usage.day.limit,
          value: key.usage.day.used,
          "aria-label": `${key.id}: ${key.usage.day.used} of ${key.usage.day.limit} today`,
        }),
        " ",
        h("span", { class: "count" }, `${key.usage.day.used} / ${key.usage.day.limit}`),
      ]
    : ["-"];
  return cardRow(
    key.id,
    [
      "Key",
      h("a", { href: `#/keys/${key.id}`, class: "id" }, key.id),
      key.label === null ? undefined : h("span", { class: "label" }, key.label),
    ],
    ["Plan", planText(key)],
    ["Today", ...today],
    ["Last used", time(key.lastUsedAt)],
    ["State", states(key)],
  );
}

/**
 * The form of a new key, in its dialog; into `account` when given (the account's plan and
 * limits, unless the form gives the key its own), else into an account of its own.
 */
export function createKeyDialog(onCreated, account) {
  const limits = planFields(
    "new",
    account ? "Empty: the account's. The key counts against the account's limits too." : "Empty: the plan's.",
    account && { plan: account.plan },
  );
  const form = h(
    "form",
    { id: "new-key", method: "dialog", class: "stacked" },
    h("h2", { id: "new-key-title" }, account ? `Create a key in ${account.name}` : "Create a key"),
    limits.elements[0],
    field(
      "Label",
      h("input", { type: "text", id: "new-label", name: "label", maxlength: 100 }),
      "Whose key: a customer, an app.",
    ),
    limits.elements.slice(1),
    field(
      "Expires (UTC)",
      h("input", { type: "datetime-local", id: "new-expires", name: "expiresAt" }),
      "Empty: never.",
    ),
    h(
      "div",
      { class: "buttons" },
      h("button", { type: "submit", value: "create", class: "primary" }, "Create key"),
      h("button", { type: "submit", value: "cancel", formnovalidate: true }, "Cancel"),
    ),
  );
  const dialog = h("dialog", { id: "new-key-dialog", "aria-labelledby": "new-key-title" }, form);
  form.addEventListener("submit", async (event) => {
    if (event.submitter?.value !== "create") return;
    event.preventDefault();
    const values = new FormData(form);
    const body = limits.values();
    if (account) {
      body.accountId = account.id;
      // The account's plan is the key's unless another was chosen.
      if (body.plan === account.plan) delete body.plan;
    }
    if (values.get("label")) body.label = values.get("label");
    if (values.get("expiresAt")) body.expiresAt = utcOf(values.get("expiresAt"));
    try {
      const { data } = await call("POST", "/keys", body);
      fieldProblems(form, undefined);
      form.reset();
      dialog.close();
      await showSecret(
        "The new key",
        "Key",
        data.key,
        `${data.id}, ${data.plan}${data.label ? `, "${data.label}"` : ""}${account ? `, in ${account.id}` : ""}.`,
      );
      onCreated(data);
    } catch (error) {
      refused(form, "create the key", error);
    }
  });
  return dialog;
}

/**
 * The keys `path` lists (`/keys?...`) as a table of links to their pages, a page at a time
 * with its Load more button; `load()` fills the first page and resolves with its count and
 * whether there are more.
 */
export const keysTable = (path, caption) =>
  pagedTable({
    id: "keys",
    caption,
    columns: ["Key", "Plan", "Today", "Last used", "State"],
    rowOf: row,
    fetchPage: async (from) => {
      const { data, next } = await call("GET", from ?? path);
      return { items: data, next };
    },
    what: "keys",
  });

export const keysView = {
  path: /^\/keys$/,
  title: "Keys",
  async render(root, params, _match, reload) {
    const q = params.get("q") ?? "";
    const state = params.get("state") ?? "";
    const plan = params.get("plan") ?? "";
    const sort = params.get("sort") ?? "created";
    const filters = h(
      "form",
      { id: "filters", role: "search", class: "toolbar" },
      field("Search by id or label", h("input", { type: "search", id: "q", name: "q", value: q })),
      field("State", select({ id: "state", name: "state" }, STATES, state)),
      field("Plan", select({ id: "plan", name: "plan" }, [["", "Any plan"], ...PLANS], plan)),
      field("Sort", select({ id: "sort", name: "sort" }, SORTS, sort)),
      h("button", { type: "submit" }, "Show"),
    );
    const apply = () => {
      const chosen = new URLSearchParams();
      for (const [name, value] of new FormData(filters))
        if (value && !(name === "sort" && value === "created")) chosen.set(name, value);
      location.hash = `#/keys${chosen.size > 0 ? `?${chosen}` : ""}`;
    };
    filters.addEventListener("submit", (event) => {
      event.preventDefault();
      apply();
    });
    const query = new URLSearchParams({ limit: "50" });
    for (const [name, value] of [
      ["q", q],
      ["state", state],
      ["plan", plan],
      ["sort", sort === "created" ? "" : sort],
    ])
      if (value) query.set(name, value);
    const keys = keysTable(`/keys?${query}`, "API keys");
    const dialog = createKeyDialog((key) =>
      reload(undefined, `Created ${key.id}: its secret was shown once.`, `#/keys/${key.id}`),
    );
    fill(
      root,
      h(
        "div",
        { class: "title" },
        h("h2", { id: "view-title", tabindex: -1 }, "Keys"),
        h("button", { type: "button", id: "create-key", class: "primary", onclick: () => open(dialog) }, "Create key"),
      ),
      filters,
      keys.elements,
      h(
        "p",
        { class: "hint" },
        "Today: requests admitted since 00:00 UTC against the day's limit, as the rate limiter counts them now. Last used: recorded within 10 s. Times in UTC (hover for yours).",
      ),
      dialog,
    );
    const { count, more } = await keys.load();
    const filtered = q || state || plan;
    if (count > 0) return `${count}${more ? "+" : ""} keys.`;
    return filtered ? "No key matches these filters." : "No keys yet: create one.";
  },
};
