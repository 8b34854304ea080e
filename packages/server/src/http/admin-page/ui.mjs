// What every view of the page draws with: elements, the status line, instants, a key's
// states, dialogs that give the focus back, a plan's fields, a key's expiry, and a form's
// fields told what the API refused.

import { ApiProblem, SignedOut } from "./api.mjs";

export const $ = (id) => document.getElementById(id);

/**
 * An element: `h("a", { href: "#/keys", class: "id" }, "text", child)`. Properties are set as
 * attributes (never `style`: the page's Content-Security-Policy allows no inline style).
 */
export function h(tag, attributes = {}, ...children) {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || value === false || value === null) continue;
    if (name.startsWith("on")) element.addEventListener(name.slice(2), value);
    else element.setAttribute(name, value === true ? "" : String(value));
  }
  return fill(element, ...children);
}

/** Appends the children to `element`, leaving out the absent ones (undefined, null, false). */
export function fill(element, ...children) {
  element.append(...children.flat().filter((child) => child !== undefined && child !== null && child !== false));
  return element;
}

export function say(text, isError = false) {
  const status = $("status");
  status.textContent = text;
  status.classList.toggle("error", isError);
}

/** An instant as ISO 8601 in UTC to the second (`2030-01-15T12:00:10Z`), or `none`. */
export const isoText = (iso, none = "never") => (iso === null || iso === undefined ? none : `${iso.slice(0, 19)}Z`);

/** An instant shown in UTC, its local time (with its zone named) on hover. */
export function time(iso, none = "never") {
  if (iso === null || iso === undefined) return document.createTextNode(none);
  const local = new Date(iso).toLocaleString(undefined, { timeZoneName: "short" });
  return h("time", { datetime: iso, title: `${local} in your time zone` }, isoText(iso));
}

const STATE_WORDS = {
  active: "active",
  rolling: "rolling",
  banned: "banned",
  expired: "expired",
  revoked: "revoked",
};

/** Every state the key is in, each a badge, with until when where it ends. */
export function states(key) {
  const until = {
    rolling: key.rolling?.until,
    banned: key.usage?.bannedUntil,
    expired: key.expiresAt,
    revoked: key.revokedAt,
  };
  return h(
    "ul",
    { class: "states", "aria-label": "States" },
    key.states.map((state) =>
      h(
        "li",
        { class: `state state-${state}` },
        STATE_WORDS[state],
        until[state] ? [state === "rolling" || state === "banned" ? " until " : " ", time(until[state])] : undefined,
      ),
    ),
  );
}

/**
 * Opens a modal dialog: the focus stays in it (the page behind is inert), Escape closes it,
 * and when it closes the focus goes back where it was. Resolves with its `returnValue`.
 */
export function open(dialog) {
  const opener = document.activeElement;
  dialog.returnValue = "";
  dialog.addEventListener("keydown", trapTab);
  dialog.showModal();
  return new Promise((resolve) => {
    dialog.addEventListener(
      "close",
      () => {
        dialog.removeEventListener("keydown", trapTab);
        if (opener instanceof HTMLElement && opener.isConnected) opener.focus();
        else $("view").focus();
        resolve(dialog.returnValue);
      },
      { once: true },
    );
  });
}

/** Tab past a dialog's last control goes to its first (Shift+Tab the other way), never to the browser's address bar. */
function trapTab(event) {
  if (event.key !== "Tab") return;
  const controls = [...event.currentTarget.querySelectorAll("button, input, select, textarea, a[href]")].filter(
    (control) => !control.disabled && control.getClientRects().length > 0,
  );
  const [first, last] = [controls[0], controls.at(-1)];
  if (!event.shiftKey && document.activeElement === last) first.focus();
  else if (event.shiftKey && document.activeElement === first) last.focus();
  else return;
  event.preventDefault();
}

/** Asks before something that cannot be undone; true when the operator said yes. */
export async function confirm(title, text, yes) {
  $("confirm-title").textContent = title;
  $("confirm-text").textContent = text;
  $("confirm-yes").textContent = yes;
  return (await open($("confirm"))) === "yes";
}

/** Shows a secret this once (a key, an admin token), the whole of it on any screen, with its Copy button. */
export async function showSecret(title, label, value, note) {
  $("secret-title").textContent = title;
  $("secret-label").textContent = label;
  $("secret-value").value = value ?? "";
  $("secret-note").textContent = note;
  const closed = open($("secret"));
  $("secret-value").focus();
  $("secret-value").select();
  await closed;
  $("secret-value").value = "";
}

$("copy").addEventListener("click", async () => {
  const value = $("secret-value").value;
  try {
    await navigator.clipboard.writeText(value);
    $("secret-note").textContent = "Copied.";
  } catch {
    $("secret-value").select();
    $("secret-note").textContent = "Select the text above and copy it (Ctrl+C).";
  }
});
$("secret-done").addEventListener("click", () => $("secret").close());

/**
 * Says next to each field what the API refused of it (its 400's `details`, by the field's
 * `name`), the rest in the status line; clears what an earlier try said.
 */
export function fieldProblems(form, error) {
  for (const shown of form.querySelectorAll(".field-error")) shown.remove();
  for (const field of form.querySelectorAll("[aria-invalid]")) {
    field.removeAttribute("aria-invalid");
    field.setAttribute("aria-describedby", field.dataset.hint ?? "");
  }
  const elsewhere = [];
  for (const detail of error?.details ?? []) {
    const field = form.elements.namedItem(detail.path);
    if (!(field instanceof HTMLElement)) {
      elsewhere.push(`${detail.path}: ${detail.message}`);
      continue;
    }
    const id = `${form.id}-${detail.path}-error`;
    field.after(h("p", { class: "field-error", id }, detail.message));
    field.setAttribute("aria-invalid", "true");
    field.setAttribute("aria-describedby", `${field.dataset.hint ?? ""} ${id}`.trim());
  }
  return elsewhere;
}

/** Says why `what` could not be done: the API's refusal of each field beside it (see `fieldProblems`), the rest in the status line. */
export function refused(form, what, error) {
  if (!(error instanceof ApiProblem)) return failed(`Could not ${what}`, error);
  const elsewhere = fieldProblems(form, error);
  say(`Could not ${what}: ${[error.message, ...elsewhere].join("; ")}`, true);
}

/** A labelled field: `[label, control]` with the control's id, and a hint it is described by. */
export function field(label, control, hint) {
  const parts = [h("label", { for: control.id }, label), control];
  if (hint !== undefined) {
    const id = `${control.id}-hint`;
    control.setAttribute("aria-describedby", id);
    control.dataset.hint = id;
    parts.push(h("p", { class: "hint", id }, hint));
  }
  return h("div", { class: "field" }, parts);
}

/** A select of `options` (`[value, text]`), `selected` chosen. */
export const select = (attributes, options, selected) =>
  h(
    "select",
    attributes,
    options.map(([value, text]) => h("option", { value, selected: value === selected }, text)),
  );

export const PLANS = [
  ["free", "Free"],
  ["pro", "Pro"],
  ["business", "Business"],
  ["enterprise", "Enterprise (limits of its own)"],
];

/**
 * A row of a table of `class="cards"` (a list of cards on a phone): `data-id` its `id`, its
 * first cell `[column, ...content]` the row's header, then each other cell the same way.
 */
export const cardRow = (id, [column, ...head], ...cells) =>
  h(
    "tr",
    { "data-id": id },
    h("th", { scope: "row", "data-label": column }, ...head),
    cells.map(([name, ...content]) => h("td", { "data-label": name }, ...content)),
  );

/**
 * A table of cards (`id`, its `columns` named in its head) filled a page at a time with its
 * Load more button: `fetchPage(from)` resolves with `{ items, next }` (`from` undefined for
 * the first page, `next` undefined after the last), each item drawn by `rowOf`. `load()` fills
 * the first page and resolves with its count and whether there are more; `what` names its items.
 */
export function pagedTable({ id, caption, columns, rowOf, fetchPage, what }) {
  const body = h("tbody");
  const more = h("button", { type: "button", id: "more", hidden: true }, "Load more");
  const table = h(
    "table",
    { id, class: "cards" },
    h("caption", { class: "visually-hidden" }, caption),
    h(
      "thead",
      {},
      h(
        "tr",
        {},
        columns.map((name) => h("th", { scope: "col" }, name)),
      ),
    ),
    body,
  );
  let next;
  const loadPage = async (from) => {
    const page = await fetchPage(from);
    body.append(...page.items.map(rowOf));
    next = page.next;
    more.hidden = next === undefined;
    return page.items.length;
  };
  more.addEventListener("click", () => loadPage(next).catch((error) => failed(`Could not load more ${what}`, error)));
  return {
    elements: [table, more],
    what,
    load: async () => ({ count: await loadPage(undefined), more: next !== undefined }),
  };
}

/** A key's or an account's plan and the limits in force, in one line: `pro (300/min, 10000/day)`. */
export const planText = (view) => `${view.plan} (${view.perMinute}/min, ${view.perDay}/day)`;

/** A term and its value, for a `dl.facts`. */
export const fact = (term, ...value) => [h("dt", {}, term), h("dd", {}, ...value)];

/**
 * A plan and its two limits as fields (ids `${prefix}-plan`, `-per-minute`, `-per-day`),
 * filled from `from` (a key or an account) when given. The Enterprise rule is the API's: its
 * refusal is said beside the limits. `values()`: what a new one is given; `changes(view)`:
 * what differs from `view` (an emptied limit: null, the plan's again).
 */
export function planFields(prefix, hint, from) {
  const plan = select({ id: `${prefix}-plan`, name: "plan" }, PLANS, from?.plan ?? "free");
  const limit = (name, id) =>
    h("input", { type: "number", id: `${prefix}-${id}`, name, min: 1, step: 1, value: from?.[name] });
  const limits = [
    ["perMinute", limit("perMinute", "per-minute")],
    ["perDay", limit("perDay", "per-day")],
  ];
  return {
    elements: [field("Plan", plan), field("Per minute", limits[0][1], hint), field("Per day", limits[1][1], hint)],
    values() {
      const given = { plan: plan.value };
      for (const [name, input] of limits) if (input.value !== "") given[name] = Number(input.value);
      return given;
    },
    changes(view) {
      const changed = {};
      if (plan.value !== view.plan) changed.plan = plan.value;
      for (const [name, input] of limits)
        if (input.value !== String(view[name])) changed[name] = input.value === "" ? null : Number(input.value);
      return changed;
    },
  };
}

/** An instant typed in a `datetime-local` field, read as UTC (the page shows instants in UTC). */
const utcOf = (text) => (text ? `${text.length === 16 ? `${text}:00` : text}Z` : null);
/** An ISO 8601 instant as a `datetime-local` field's value, in UTC. */
const localOf = (iso) => (iso ? iso.slice(0, 16) : "");

/**
 * A key's expiry as a field (`id`), typed in UTC, filled from `iso` when given. `value()`: the
 * instant typed (ISO 8601), null when empty (never); `changed()`: whether it is not `iso`.
 */
export function expiresField(id, iso) {
  const input = h("input", { type: "datetime-local", id, name: "expiresAt", value: localOf(iso) });
  return {
    element: field("Expires (UTC)", input, "Empty: never."),
    value: () => utcOf(input.value),
    changed: () => input.value !== localOf(iso),
  };
}

/** Says what went wrong, unless the page signed out (which said why). */
export function failed(what, error) {
  if (error instanceof SignedOut) return;
  say(`${what}: ${error.message}`, true);
}
