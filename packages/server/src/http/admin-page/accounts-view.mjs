// The accounts (customers whose keys count against one plan together): of one plan or all, a
// page at a time; a new account made here.

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
  time,
} from "./ui.mjs";

const row = (account) =>
  cardRow(
    account.id,
    [
      "Account",
      h("a", { href: `#/accounts/${account.id}` }, account.name),
      h("span", { class: "label id" }, account.id),
    ],
    ["Plan", planText(account), account.ownLimits ? h("span", { class: "label" }, "limits of its own") : undefined],
    ["Keys", String(account.keys)],
    ["Created", time(account.createdAt)],
  );

/** The form of a new account, in its dialog. */
function createDialog(onCreated) {
  const limits = planFields("new-account", "Empty: the plan's. An Enterprise account needs its own.");
  const form = h(
    "form",
    { id: "new-account", method: "dialog", class: "stacked" },
    h("h2", { id: "new-account-title" }, "Create an account"),
    field(
      "Name",
      h("input", { type: "text", id: "new-account-name", name: "name", maxlength: 100 }),
      "The customer: a company, a team.",
    ),
    limits.elements,
    h(
      "div",
      { class: "buttons" },
      h("button", { type: "submit", value: "create", class: "primary" }, "Create account"),
      h("button", { type: "submit", value: "cancel", formnovalidate: true }, "Cancel"),
    ),
  );
  const dialog = h("dialog", { id: "new-account-dialog", "aria-labelledby": "new-account-title" }, form);
  form.addEventListener("submit", async (event) => {
    if (event.submitter?.value !== "create") return;
    event.preventDefault();
    try {
      const { data } = await call("POST", "/accounts", { name: form.elements.name.value, ...limits.values() });
      fieldProblems(form, undefined);
      form.reset();
      dialog.close();
      onCreated(data);
    } catch (error) {
      refused(form, "create the account", error);
    }
  });
  return dialog;
}

export const accountsView = {
  path: /^\/accounts$/,
  title: "Accounts",
  async render(root, params, _match, reload) {
    const plan = params.get("plan") ?? "";
    const filters = h(
      "form",
      { id: "account-filters", role: "search", class: "toolbar" },
      field("Plan", select({ id: "account-plan-filter", name: "plan" }, [["", "Any plan"], ...PLANS], plan)),
      h("button", { type: "submit" }, "Show"),
    );
    filters.addEventListener("submit", (event) => {
      event.preventDefault();
      const chosen = filters.elements.plan.value;
      location.hash = `#/accounts${chosen ? `?plan=${chosen}` : ""}`;
    });
    const query = new URLSearchParams({ limit: "50" });
    if (plan) query.set("plan", plan);
    const accounts = pagedTable({
      id: "accounts",
      caption: "Accounts, oldest first",
      columns: ["Account", "Plan", "Keys", "Created"],
      rowOf: row,
      fetchPage: async (cursor) => {
        if (cursor) query.set("cursor", cursor);
        const { data } = await call("GET", `/accounts?${query}`);
        // None on the last page (absent, or null).
        return { items: data.accounts, next: data.nextCursor ?? undefined };
      },
      what: "accounts",
    });
    const dialog = createDialog((account) =>
      reload(undefined, `Created ${account.id}, ${account.name}.`, `#/accounts/${account.id}`),
    );
    fill(
      root,
      h(
        "div",
        { class: "title" },
        h("h2", { id: "view-title", tabindex: -1 }, "Accounts"),
        h(
          "button",
          { type: "button", id: "create-account", class: "primary", onclick: () => open(dialog) },
          "Create account",
        ),
      ),
      filters,
      accounts.elements,
      h(
        "p",
        { class: "hint" },
        "Plan: the limits in force, which every key of the account counts against together. Times in UTC (hover for yours).",
      ),
      dialog,
    );
    const { count, more } = await accounts.load();
    if (count > 0) return `${count}${more ? "+" : ""} accounts.`;
    return plan ? "No account has this plan." : "No accounts yet: create one.";
  },
};
