// One account: its name, plan and limits changed in place, its keys (a new one made in it),
// its usage summed over its keys, and its audit entries.

import { call } from "./api.mjs";
import { auditOf } from "./audit-view.mjs";
import { usageCharts } from "./chart.mjs";
import { createKeyDialog, keysTable } from "./keys-view.mjs";
import { changesForm, titleBar } from "./frames.mjs";
import { fact, field, fill, h, planFields, time } from "./ui.mjs";

function facts(account) {
  return h(
    "dl",
    { class: "facts" },
    fact("Id", h("span", { class: "id" }, account.id)),
    fact(
      "Plan",
      `${account.plan}: ${account.perMinute} a minute, ${account.perDay} a day, `,
      account.ownLimits ? "limits of its own" : "the plan's limits",
    ),
    fact("Keys", String(account.keys)),
    fact("Created", time(account.createdAt)),
  );
}

/** The form that changes name, plan and limits: only what was changed is sent. */
function editForm(account, reload) {
  const limits = planFields("account", "Empty: the plan's. An Enterprise account needs its own.", account);
  const name = h("input", { type: "text", id: "account-name", name: "name", maxlength: 100, value: account.name });
  const changes = () => {
    const changed = limits.changes(account);
    if (name.value !== account.name) changed.name = name.value;
    return changed;
  };
  return changesForm(
    {
      id: "account-edit",
      title: "Name, plan, limits",
      fields: [field("Name", name), limits.elements],
      of: account,
      path: `/accounts/${account.id}`,
      changes,
      focusId: "account-name",
    },
    reload,
  );
}

export const accountView = {
  path: /^\/accounts\/(acct_[A-Za-z0-9_]+)$/,
  title: "Account",
  async render(root, _params, [, id], reload) {
    const keys = keysTable(`/keys?account=${id}&limit=50`, `The keys of ${id}`);
    const [{ data: account }, usage, trail, listed] = await Promise.all([
      call("GET", `/accounts/${id}`),
      usageCharts(`/accounts/${id}`, "Summed over the account's keys. "),
      auditOf(id),
      keys.load(),
    ]);
    const dialog = createKeyDialog(
      (key) => reload("create-key", `Created ${key.id} in ${account.id}: its secret was shown once.`),
      account,
    );
    fill(
      root,
      h("p", { class: "crumbs" }, h("a", { href: "#/accounts" }, "All accounts")),
      h("h2", { id: "view-title", tabindex: -1 }, account.name, " ", h("span", { class: "id" }, account.id)),
      facts(account),
      editForm(account, reload),
      titleBar(h("h3", { id: "account-keys-title" }, "Keys"), "create-key", "Create key in this account", dialog),
      listed.count === 0 ? h("p", {}, "No keys yet.") : keys.elements,
      h(
        "p",
        { class: "hint" },
        "Each key counts against its own limits and its account's: a request is admitted only if both admit it.",
      ),
      usage,
      trail,
      dialog,
    );
    return `${account.id}, ${account.name}: ${account.keys} keys.`;
  },
};
