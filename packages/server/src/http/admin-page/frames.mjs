// What the views are framed in beyond their elements: a list's page (its title and Create
// button, its filters, its table a page at a time, its hint), the dialog that creates one
// more of something, and the form that saves what was changed of one.

import { call } from "./api.mjs";
import { fieldProblems, fill, h, open, refused, say } from "./ui.mjs";

/** A heading with, beside it, the button (`id`, `text`) that opens `dialog`. */
export const titleBar = (heading, id, text, dialog) =>
  h(
    "div",
    { class: "title" },
    heading,
    h("button", { type: "button", id, class: "primary", onclick: () => open(dialog) }, text),
  );

/**
 * A list's filters: a search form (`id`) of `fields`, each named as the list's query
 * parameter, whose Show moves to `path` with what was chosen; an empty field, or one at its
 * `defaults` value, is left out. `chosen`: what of `params` (the address's) the fields name,
 * left out the same way, for the API's query.
 */
export function filterForm(id, path, params, fields, defaults = {}) {
  const form = h("form", { id, role: "search", class: "toolbar" }, ...fields, h("button", { type: "submit" }, "Show"));
  const given = (pairs) => new URLSearchParams([...pairs].filter(([name, value]) => value && value !== defaults[name]));
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const chosen = given(new FormData(form));
    location.hash = `#${path}${chosen.size > 0 ? `?${chosen}` : ""}`;
  });
  const names = [...new FormData(form).keys()];
  return { form, chosen: given(names.map((name) => [name, params.get(name) ?? ""])) };
}

/**
 * A list's page in `root`: its title and the button (`create`: `[id, text]`) that opens
 * `dialog`, its `filters`, its `table` (a `pagedTable`) and a `hint`. Resolves with what the
 * status line says: how many (`50+ keys.` when there are more), or `none` when there is none.
 */
export async function listPage(root, { title, create: [id, text], dialog, filters, table, hint, none }) {
  fill(
    root,
    titleBar(h("h2", { id: "view-title", tabindex: -1 }, title), id, text, dialog),
    filters,
    table.elements,
    h("p", { class: "hint" }, hint),
    dialog,
  );
  const { count, more } = await table.load();
  return count > 0 ? `${count}${more ? "+" : ""} ${table.what}.` : none;
}

/**
 * A dialog whose form (`id`; its heading `${id}-title`, the dialog `${id}-dialog`) of `fields`
 * (each an element or a list of them) makes one more of `what`: Create posts `body()` to
 * `path`, empties the form, closes the dialog and resolves `created(answer)`; what the API
 * refused is said beside its fields, the dialog left open. Cancel closes it, whatever the
 * fields say.
 */
export function createDialog({ id, title, fields, create, path, body, what, created }) {
  const form = h(
    "form",
    { id, method: "dialog", class: "stacked" },
    h("h2", { id: `${id}-title` }, title),
    ...fields,
    h(
      "div",
      { class: "buttons" },
      h("button", { type: "submit", value: "create", class: "primary" }, create),
      h("button", { type: "submit", value: "cancel", formnovalidate: true }, "Cancel"),
    ),
  );
  const dialog = h("dialog", { id: `${id}-dialog`, "aria-labelledby": `${id}-title` }, form);
  form.addEventListener("submit", async (event) => {
    if (event.submitter?.value !== "create") return;
    event.preventDefault();
    try {
      const { data } = await call("POST", path, body());
      fieldProblems(form, undefined);
      form.reset();
      dialog.close();
      await created(data);
    } catch (error) {
      refused(form, `create ${what}`, error);
    }
  });
  return dialog;
}

/**
 * The form (`id`; its heading `${id}-title`) of `fields` (as `createDialog`'s) that changes
 * `of` (a key, an account, at `path`) in place: Save sends only what `changes()` says
 * differs, then draws the view again, the focus on `focusId`; when nothing differs, nothing
 * is sent.
 */
export function changesForm({ id, title, fields, of, path, changes, focusId }, reload) {
  const form = h(
    "form",
    { id, class: "stacked", "aria-labelledby": `${id}-title` },
    h("h3", { id: `${id}-title` }, title),
    ...fields,
    h("div", { class: "buttons" }, h("button", { type: "submit", class: "primary" }, "Save changes")),
  );
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const changed = changes();
    const names = Object.keys(changed);
    if (names.length === 0) return say("Nothing to save: no field was changed.");
    try {
      await call("PATCH", path, changed);
      await reload(focusId, `Saved ${names.join(", ")} of ${of.id}: in force on every server within 5 s.`);
    } catch (error) {
      refused(form, `change ${of.id}`, error);
    }
  });
  return form;
}
