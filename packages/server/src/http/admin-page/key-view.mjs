// One key: its numbers, states and account, its plan, limits, scopes, addresses, label and
// expiry changed in place, roll, revoke, lift a ban, its usage charted, and its audit entries.

import { call } from "./api.mjs";
import { auditOf } from "./audit-view.mjs";
import { usageCharts } from "./chart.mjs";
import { changesForm } from "./frames.mjs";
import {
  confirm,
  expiresField,
  fact,
  failed,
  field,
  fill,
  h,
  open,
  planFields,
  select,
  showSecret,
  states,
  time,
} from "./ui.mjs";

const OVERLAPS = [
  ["0", "No time: refuse it at once"],
  ["60", "1 minute"],
  ["3600", "1 hour"],
  ["86400", "1 day"],
  ["604800", "7 days"],
];

/** The facts of the key, as a description list. */
function facts(key) {
  return h(
    "dl",
    { class: "facts" },
    fact("State", states(key)),
    fact("Account", h("a", { href: `#/accounts/${key.accountId}`, class: "id" }, key.accountId)),
    fact("Plan", `${key.plan}: ${key.perMinute} a minute, ${key.perDay} a day`),
    fact(
      "Today",
      key.usage
        ? `${key.usage.day.used} of ${key.usage.day.limit} admitted (this minute ${key.usage.minute.used} of ${key.usage.minute.limit})`
        : "-",
    ),
    fact("Last used", time(key.lastUsedAt), h("span", { class: "hint" }, " (recorded within 10 s)")),
    fact("Created", time(key.createdAt)),
    fact("Expires", time(key.expiresAt, "never")),
    fact("Scopes", key.scopes.join(", ")),
    fact("Allowed from", key.allowFrom ? key.allowFrom.join(", ") : "any address"),
    key.revokedAt ? fact("Revoked", time(key.revokedAt)) : [],
  );
}

/** Every scope a key may be given, as the admin API names them. */
const SCOPES = ["pets:read", "pets:write", "orders:read"];

/** The key's scopes as checkboxes in a group the API's refusal of `scopes` is said beside. */
function scopesField(key) {
  const boxes = SCOPES.map((scope) =>
    h("input", {
      type: "checkbox",
      id: `edit-scope-${scope.replace(":", "-")}`,
      value: scope,
      checked: key.scopes.includes(scope),
    }),
  );
  const group = h(
    "fieldset",
    { id: "edit-scopes", name: "scopes", class: "field checks", "aria-describedby": "edit-scopes-hint" },
    h("legend", {}, "Scopes"),
    boxes.map((box) => h("label", { for: box.id }, box, ` ${box.value}`)),
  );
  group.dataset.hint = "edit-scopes-hint";
  const hint = h(
    "p",
    { class: "hint", id: "edit-scopes-hint" },
    "What the key may do; all three unless it was given fewer.",
  );
  return { element: [group, hint], chosen: () => boxes.filter((box) => box.checked).map((box) => box.value) };
}

/** The form that changes plan, limits, scopes, addresses, label and expiry: only what was changed is sent. */
function editForm(key, reload) {
  const limits = planFields("edit", "Empty: the plan's. An Enterprise key needs its own.", key);
  const scopes = scopesField(key);
  const allowFrom = h("input", {
    type: "text",
    id: "edit-allow-from",
    name: "allowFrom",
    value: (key.allowFrom ?? []).join(", "),
  });
  const label = h("input", { type: "text", id: "edit-label", name: "label", maxlength: 100, value: key.label ?? "" });
  const expires = expiresField("edit-expires", key.expiresAt);
  const changes = () => {
    const changed = limits.changes(key);
    const chosen = scopes.chosen();
    if (chosen.join() !== key.scopes.join()) changed.scopes = chosen.length === SCOPES.length ? null : chosen;
    const ranges = allowFrom.value
      .split(",")
      .map((range) => range.trim())
      .filter((range) => range !== "");
    if (ranges.join() !== (key.allowFrom ?? []).join()) changed.allowFrom = ranges.length === 0 ? null : ranges;
    if (label.value !== (key.label ?? "")) changed.label = label.value === "" ? null : label.value;
    if (expires.changed()) changed.expiresAt = expires.value();
    return changed;
  };
  return changesForm(
    {
      id: "edit",
      title: "Plan, limits, scopes, addresses, label, expiry",
      fields: [
        limits.elements,
        scopes.element,
        field(
          "Allowed from",
          allowFrom,
          "CIDR ranges its requests must come from, comma-separated (10.0.0.0/8, 2001:db8::/32). Empty: any address.",
        ),
        field("Label", label, "Empty: none."),
        expires.element,
      ],
      of: key,
      path: `/keys/${key.id}`,
      changes,
      focusId: "edit-plan",
    },
    reload,
  );
}

function rollDialog(key, reload) {
  const form = h(
    "form",
    { method: "dialog", class: "stacked" },
    h("h2", { id: "roll-title" }, `Roll ${key.id}`),
    h(
      "p",
      {},
      "A new secret for the same key, limits and usage. The old secret keeps working for the overlap; its answers carry Deprecation and Sunset.",
    ),
    field("Old secret works for", select({ id: "overlap", name: "overlap" }, OVERLAPS, "3600")),
    h(
      "div",
      { class: "buttons" },
      h("button", { type: "submit", value: "roll", class: "primary" }, "Roll"),
      h("button", { type: "submit", value: "cancel" }, "Cancel"),
    ),
  );
  const dialog = h("dialog", { id: "roll", "aria-labelledby": "roll-title" }, form);
  const start = async () => {
    if ((await open(dialog)) !== "roll") return;
    try {
      const { data } = await call("POST", `/keys/${key.id}/roll`, {
        overlapSeconds: Number(form.elements.overlap.value),
      });
      await showSecret(
        "The new secret",
        "Key",
        data.key,
        data.rolling
          ? `The old secret works until ${data.rolling.until.slice(0, 19)}Z.`
          : "The old secret no longer works.",
      );
      await reload("roll-key", `Rolled ${key.id}: its new secret was shown once.`);
    } catch (error) {
      failed(`Could not roll ${key.id}`, error);
    }
  };
  return { dialog, start };
}

export const keyView = {
  path: /^\/keys\/(key_[A-Za-z0-9_]+)$/,
  title: "Key",
  async render(root, _params, [, id], reload) {
    const [{ data: key }, usage, trail] = await Promise.all([
      call("GET", `/keys/${id}`),
      usageCharts(`/keys/${id}`),
      auditOf(id),
    ]);
    const roll = rollDialog(key, reload);
    const actions = h("div", { class: "buttons", role: "group", "aria-label": "Actions" });
    if (!key.revokedAt) {
      actions.append(
        h("button", { type: "button", id: "roll-key", onclick: roll.start, disabled: key.rolling !== null }, "Roll"),
        h(
          "button",
          {
            type: "button",
            id: "revoke-key",
            class: "danger",
            onclick: async () => {
              if (
                !(await confirm(
                  `Revoke ${key.id}?`,
                  "Every server refuses it within 5 seconds. This cannot be undone.",
                  "Revoke",
                ))
              )
                return;
              try {
                await call("POST", `/keys/${key.id}/revoke`);
                await reload(undefined, `Revoked ${key.id}: every server refuses it within 5 seconds.`);
              } catch (error) {
                failed(`Could not revoke ${key.id}`, error);
              }
            },
          },
          "Revoke",
        ),
      );
      if (key.states.includes("banned"))
        actions.append(
          h(
            "button",
            {
              type: "button",
              id: "unban-key",
              onclick: async () => {
                try {
                  const { data } = await call("POST", `/keys/${key.id}/unban`);
                  await reload(
                    "roll-key",
                    data.unbanned ? `Lifted the ban of ${key.id}.` : `${key.id} was not banned.`,
                  );
                } catch (error) {
                  failed(`Could not lift the ban of ${key.id}`, error);
                }
              },
            },
            "Lift ban",
          ),
        );
    }
    fill(
      root,
      h("p", { class: "crumbs" }, h("a", { href: "#/keys" }, "All keys")),
      h("h2", { id: "view-title", tabindex: -1 }, h("span", { class: "id" }, key.id), key.label ? ` ${key.label}` : ""),
      facts(key),
      actions,
      key.rolling ? h("p", { class: "hint" }, "Rolled: roll again once the old secret's overlap ends.") : undefined,
      key.revokedAt ? undefined : editForm(key, reload),
      usage,
      trail,
      roll.dialog,
    );
    return `${key.id}: ${key.states.join(", ")}.`;
  },
};
