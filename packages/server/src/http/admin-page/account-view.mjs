// One account: its name, plan and limits changed in place, its keys (a new one made in it),
// its usage summed over its keys, and its audit entries.

import { call } from "./api.mjs";
import { auditOf } from "./audit-view.mjs";
import { usageCharts } from "./chart.mjs";
import { createKeyDialog, keysTable } from "./keys-view.mjs";
import { fact, field, fill, h, open, planFields, refused, say, time } from "./ui.mjs";

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
  const form = h(
    "form",
    { id: "account-edit", class: "stacked", "aria-labelledby": "account-edit-title" },
    h("h3", { id: "account-edit-title" }, "Name, plan, limits"),
    field("Name", name),
    limits.elements,
    h("div", { class: "buttons" }, h("button", { type: "submit", class: "primary" }, "Save changes")),
  );
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const changes = limits.changes(account);
    if (name.value !== account.name) changes.name = name.value;
    if (Object.keys(changes).length === 0) return say("Nothing to save: no field was changed.");
    try {
      await call("PATCH", `/accounts/${account.id}`, changes);
      await reload(
        "account-name",
        `Saved ${Object.keys(changes).join(", ")} of ${account.id}: in force on every server within 5 s.`,
      );
    } catch (error) {
      refused(form, `change ${account.id}`, error);
    }
  });
  return form;
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
      h(
        "div",
        { class: "title" },
        h("h3", { id: "account-keys-title" }, "Keys"),
        h(
          "button",
          { type: "button", id: "create-key", class: "primary", onclick: () => open(dialog) },
          "Create key in this account",
        ),
      ),
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
