// The accounts (customers whose keys count against one plan together): of one plan or all, a
// page at a time; a new account made here.

import { call } from "./api.mjs";
import { createDialog, filterForm, listPage } from "./frames.mjs";
import { cardRow, field, h, PLANS, pagedTable, planFields, planText, select, time } from "./ui.mjs";

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
function newAccountDialog(created) {
  const limits = planFields("new-account", "Empty: the plan's. An Enterprise account needs its own.");
  const name = h("input", { type: "text", id: "new-account-name", name: "name", maxlength: 100 });
  return createDialog({
    id: "new-account",
    title: "Create an account",
    fields: [field("Name", name, "The customer: a company, a team."), limits.elements],
    create: "Create account",
    path: "/accounts",
    body: () => ({ name: name.value, ...limits.values() }),
    what: "the account",
    created,
  });
}

export const accountsView = {
  path: /^\/accounts$/,
  title: "Accounts",
  async render(root, params, _match, reload) {
    const filters = filterForm("account-filters", "/accounts", params, [
      field(
        "Plan",
        select({ id: "account-plan-filter", name: "plan" }, [["", "Any plan"], ...PLANS], params.get("plan") ?? ""),
      ),
    ]);
    const query = new URLSearchParams([["limit", "50"], ...filters.chosen]);
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
    return listPage(root, {
      title: "Accounts",
      create: ["create-account", "Create account"],
      dialog: newAccountDialog((account) =>
        reload(undefined, `Created ${account.id}, ${account.name}.`, `#/accounts/${account.id}`),
      ),
      filters: filters.form,
      table: accounts,
      hint: "Plan: the limits in force, which every key of the account counts against together. Times in UTC (hover for yours).",
      none: filters.chosen.size > 0 ? "No account has this plan." : "No accounts yet: create one.",
    });
  },
};
