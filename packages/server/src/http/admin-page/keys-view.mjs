// The keys: filtered by state and plan, sorted, searched, a page at a time; a new key made here.

import { ApiProblem, call } from "./api.mjs";
import {
  failed,
  field,
  fieldProblems,
  fill,
  h,
  open,
  PLANS,
  say,
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
  const cell = (label, ...content) => h("td", { "data-label": label }, ...content);
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
  return h(
    "tr",
    { "data-id": key.id },
    h(
      "th",
      { scope: "row", "data-label": "Key" },
      h("a", { href: `#/keys/${key.id}`, class: "id" }, key.id),
      key.label === null ? undefined : h("span", { class: "label" }, key.label),
    ),
    cell("Plan", `${key.plan} (${key.perMinute}/min, ${key.perDay}/day)`),
    cell("Today", ...today),
    cell("Last used", time(key.lastUsedAt)),
    cell("State", states(key)),
  );
}

/** The form of a new key, in its dialog. */
function createDialog(onCreated) {
  const perMinute = h("input", { type: "number", id: "new-per-minute", name: "perMinute", min: 1, step: 1 });
  const perDay = h("input", { type: "number", id: "new-per-day", name: "perDay", min: 1, step: 1 });
  const plan = select({ id: "new-plan", name: "plan" }, PLANS, "free");
  const form = h(
    "form",
    { id: "new-key", method: "dialog", class: "stacked" },
    h("h2", { id: "new-key-title" }, "Create a key"),
    field("Plan", plan),
    field(
      "Label",
      h("input", { type: "text", id: "new-label", name: "label", maxlength: 100 }),
      "Whose key: a customer, an app.",
    ),
    field("Per minute", perMinute, "Empty: the plan's. Required for Enterprise."),
    field("Per day", perDay, "Empty: the plan's. Required for Enterprise."),
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
  plan.addEventListener("change", () => {
    perMinute.required = perDay.required = plan.value === "enterprise";
  });
  const dialog = h("dialog", { id: "new-key-dialog", "aria-labelledby": "new-key-title" }, form);
  form.addEventListener("submit", async (event) => {
    if (event.submitter?.value !== "create") return;
    event.preventDefault();
    const values = new FormData(form);
    const body = { plan: values.get("plan") };
    if (values.get("label")) body.label = values.get("label");
    for (const name of ["perMinute", "perDay"]) if (values.get(name)) body[name] = Number(values.get(name));
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
        `${data.id}, ${data.plan}${data.label ? `, "${data.label}"` : ""}.`,
      );
      onCreated(data);
    } catch (error) {
      if (!(error instanceof ApiProblem)) return failed("Could not create the key", error);
      const elsewhere = fieldProblems(form, error);
      say(`Could not create the key: ${[error.message, ...elsewhere].join("; ")}`, true);
    }
  });
  return dialog;
}

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
    const body = h("tbody");
    const more = h("button", { type: "button", id: "more", hidden: true }, "Load more");
    const dialog = createDialog((key) =>
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
      h(
        "table",
        { id: "keys", class: "cards" },
        h("caption", { class: "visually-hidden" }, "API keys"),
        h(
          "thead",
          {},
          h(
            "tr",
            {},
            ["Key", "Plan", "Today", "Last used", "State"].map((name) => h("th", { scope: "col" }, name)),
          ),
        ),
        body,
      ),
      more,
      h(
        "p",
        { class: "hint" },
        "Today: requests admitted since 00:00 UTC against the day's limit, as the rate limiter counts them now. Last used: recorded within 10 s. Times in UTC (hover for yours).",
      ),
      dialog,
    );
    const query = new URLSearchParams({ limit: "50" });
    for (const [name, value] of [
      ["q", q],
      ["state", state],
      ["plan", plan],
      ["sort", sort === "created" ? "" : sort],
    ])
      if (value) query.set(name, value);
    let next;
    const load = async (path) => {
      const page = await call("GET", path);
      body.append(...page.data.map(row));
      next = page.next;
      more.hidden = next === undefined;
      return page.data.length;
    };
    more.addEventListener("click", () => load(next).catch((error) => failed("Could not load more keys", error)));
    const count = await load(`/keys?${query}`);
    const filtered = q || state || plan;
    if (count > 0) return `${count}${next ? "+" : ""} keys.`;
    return filtered ? "No key matches these filters." : "No keys yet: create one.";
  },
};
