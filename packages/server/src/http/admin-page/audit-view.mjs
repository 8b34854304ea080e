// The audit trail: every change to a key, an account or an admin token, newest first,
// filtered by what was changed, action and actor, a page at a time.

import { call } from "./api.mjs";
import { failed, field, fill, h, select, time } from "./ui.mjs";

const ACTIONS = [
  ["", "Any action"],
  ["create", "create"],
  ["update", "update"],
  ["roll", "roll"],
  ["revoke", "revoke"],
  ["unban", "unban"],
];

/** What changed, in words: each detail as `name=value`. */
const detailsText = (details) =>
  Object.entries(details ?? {})
    .map(([name, value]) => `${name}=${typeof value === "string" ? value : JSON.stringify(value)}`)
    .join(" ");

/** A link to the changed key's or account's page, or the admin token's id as it is. */
function subject(id) {
  const page = id.startsWith("key_") ? "keys" : id.startsWith("acct_") ? "accounts" : undefined;
  return page ? h("a", { href: `#/${page}/${id}`, class: "id" }, id) : h("span", { class: "id" }, id);
}

function row(entry) {
  const cell = (label, ...content) => h("td", { "data-label": label }, ...content);
  return h(
    "tr",
    { "data-entry": entry.id },
    cell("When", time(entry.at)),
    cell("Action", entry.action),
    cell("Of", subject(entry.keyId)),
    cell(
      "Who",
      entry.actor.who,
      entry.actor.from ? h("span", { class: "label" }, `from ${entry.actor.from}`) : undefined,
    ),
    cell("What", detailsText(entry.details)),
  );
}

/** The entries as a table (appending later pages to its body). */
export function auditTable(entries, { caption, id }) {
  return h(
    "table",
    { class: "cards audit", id, tabindex: -1 },
    h("caption", { class: "visually-hidden" }, caption),
    h(
      "thead",
      {},
      h(
        "tr",
        {},
        ["When", "Action", "Of", "Who", "What"].map((name) => h("th", { scope: "col" }, name)),
      ),
    ),
    h(
      "tbody",
      {},
      entries.length === 0 ? h("tr", {}, h("td", { colspan: 5 }, "No changes recorded.")) : entries.map(row),
    ),
  );
}

/** The latest changes to one key or account (`id`), under their heading, with a link to the older ones. */
export async function auditOf(id) {
  const { data: trail, next } = await call("GET", `/audit?keyId=${id}&limit=20`);
  return [
    h("h3", { id: "trail-title" }, "Audit trail"),
    auditTable(trail, { caption: `Changes to ${id}, newest first` }),
    next ? h("p", {}, h("a", { href: `#/audit?keyId=${id}` }, "Older changes")) : undefined,
  ];
}

export const auditView = {
  path: /^\/audit$/,
  title: "Audit trail",
  async render(root, params) {
    const chosen = {
      keyId: params.get("keyId") ?? "",
      action: params.get("action") ?? "",
      actor: params.get("actor") ?? "",
    };
    const filters = h(
      "form",
      { id: "audit-filters", role: "search", class: "toolbar" },
      field(
        "Key, account or token id",
        h("input", { type: "text", id: "audit-key", name: "keyId", value: chosen.keyId, placeholder: "key_..." }),
      ),
      field("Action", select({ id: "audit-action", name: "action" }, ACTIONS, chosen.action)),
      field(
        "Who",
        h("input", {
          type: "text",
          id: "audit-actor",
          name: "actor",
          value: chosen.actor,
          placeholder: "admin:tok_...",
        }),
      ),
      h("button", { type: "submit" }, "Show"),
    );
    filters.addEventListener("submit", (event) => {
      event.preventDefault();
      const query = new URLSearchParams();
      for (const [name, value] of new FormData(filters))
        if (String(value).trim()) query.set(name, String(value).trim());
      location.hash = `#/audit${query.size > 0 ? `?${query}` : ""}`;
    });
    const query = new URLSearchParams({ limit: "50" });
    for (const [name, value] of Object.entries(chosen)) if (value) query.set(name, value);
    const first = await call("GET", `/audit?${query}`);
    const table = auditTable(first.data, { caption: "Changes, newest first", id: "audit" });
    let next = first.next;
    const more = h("button", { type: "button", id: "older", hidden: next === undefined }, "Older changes");
    more.addEventListener("click", async () => {
      try {
        const page = await call("GET", next);
        table.tBodies[0].append(...page.data.map(row));
        next = page.next;
        more.hidden = next === undefined;
        // The button goes with the last page: the focus goes to the table it filled.
        if (next === undefined) table.focus();
      } catch (error) {
        failed("Could not load older changes", error);
      }
    });
    fill(
      root,
      h("h2", { id: "view-title", tabindex: -1 }, "Audit trail"),
      filters,
      table,
      more,
      h(
        "p",
        { class: "hint" },
        "Who: admin:<token id> through this console or the admin API, cli:USER@HOST from the command line. Times in UTC.",
      ),
    );
    return `${first.data.length}${next ? "+" : ""} changes.`;
  },
};
