// The keys: filtered by state and plan, sorted, searched, a page at a time; a new key made here.
// Its table and its new key's dialog serve an account's page too.

import { call } from "./api.mjs";
import { createDialog, filterForm, listPage } from "./frames.mjs";
import {
  cardRow,
  expiresField,
  field,
  h,
  PLANS,
  pagedTable,
  planFields,
  planText,
  select,
  showSecret,
  states,
  time,
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
  const label = h("input", { type: "text", id: "new-label", name: "label", maxlength: 100 });
  const expires = expiresField("new-expires");
  const body = () => {
    const given = limits.values();
    if (account) {
      given.accountId = account.id;
      // The account's plan is the key's unless another was chosen.
      if (given.plan === account.plan) delete given.plan;
    }
    if (label.value) given.label = label.value;
    const expiresAt = expires.value();
    if (expiresAt) given.expiresAt = expiresAt;
    return given;
  };
  return createDialog({
    id: "new-key",
    title: account ? `Create a key in ${account.name}` : "Create a key",
    fields: [
      limits.elements[0],
      field("Label", label, "Whose key: a customer, an app."),
      limits.elements.slice(1),
      expires.element,
    ],
    create: "Create key",
    path: "/keys",
    body,
    what: "the key",
    created: async (data) => {
      await showSecret(
        "The new key",
        "Key",
        data.key,
        `${data.id}, ${data.plan}${data.label ? `, "${data.label}"` : ""}${account ? `, in ${account.id}` : ""}.`,
      );
      onCreated(data);
    },
  });
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
    const filters = filterForm(
      "filters",
      "/keys",
      params,
      [
        field(
          "Search by id or label",
          h("input", { type: "search", id: "q", name: "q", value: params.get("q") ?? "" }),
        ),
        field("State", select({ id: "state", name: "state" }, STATES, params.get("state") ?? "")),
        field("Plan", select({ id: "plan", name: "plan" }, [["", "Any plan"], ...PLANS], params.get("plan") ?? "")),
        field("Sort", select({ id: "sort", name: "sort" }, SORTS, params.get("sort") ?? "created")),
      ],
      { sort: "created" },
    );
    return listPage(root, {
      title: "Keys",
      create: ["create-key", "Create key"],
      dialog: createKeyDialog((key) =>
        reload(undefined, `Created ${key.id}: its secret was shown once.`, `#/keys/${key.id}`),
      ),
      filters: filters.form,
      table: keysTable(`/keys?${new URLSearchParams([["limit", "50"], ...filters.chosen])}`, "API keys"),
      hint: "Today: requests admitted since 00:00 UTC against the day's limit, as the rate limiter counts them now. Last used: recorded within 10 s. Times in UTC (hover for yours).",
      // A sort leaves out no key: only the other filters can leave the list empty.
      none: [...filters.chosen.keys()].some((name) => name !== "sort")
        ? "No key matches these filters."
        : "No keys yet: create one.",
    });
  },
};
