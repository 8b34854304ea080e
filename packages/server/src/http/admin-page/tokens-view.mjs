// The admin tokens: listed, made (shown once), revoked.

import { call, tokenId } from "./api.mjs";
import { confirm, failed, field, fieldProblems, fill, h, refused, showSecret, time } from "./ui.mjs";

function row(token, reload) {
  const cell = (label, ...content) => h("td", { "data-label": label }, ...content);
  const yours = token.id === tokenId();
  const revoke = async () => {
    const warning = yours
      ? "This is the token this console is signed in with: you will be signed out. The admin API refuses it from now on."
      : "The admin API refuses it from now on. This cannot be undone.";
    if (!(await confirm(`Revoke ${token.id}?`, warning, "Revoke"))) return;
    try {
      await call("POST", `/tokens/${token.id}/revoke`);
      await reload(undefined, `Revoked ${token.id}.`);
    } catch (error) {
      failed(`Could not revoke ${token.id}`, error);
    }
  };
  return h(
    "tr",
    { "data-id": token.id },
    h(
      "th",
      { scope: "row", "data-label": "Token" },
      h("span", { class: "id" }, token.id),
      yours ? h("span", { class: "label" }, "this console's") : undefined,
    ),
    cell("Label", token.label ?? ""),
    cell("Created", time(token.createdAt)),
    cell("State", token.revokedAt ? ["revoked ", time(token.revokedAt)] : "active"),
    cell(
      "Actions",
      token.revokedAt
        ? ""
        : h(
            "button",
            { type: "button", class: "danger", "aria-label": `Revoke ${token.id}`, onclick: revoke },
            "Revoke",
          ),
    ),
  );
}

export const tokensView = {
  path: /^\/tokens$/,
  title: "Admin tokens",
  async render(root, _params, _match, reload) {
    const { data } = await call("GET", "/tokens");
    const form = h(
      "form",
      { id: "new-token", class: "toolbar", "aria-labelledby": "new-token-title" },
      h("h3", { id: "new-token-title" }, "Create an admin token"),
      field(
        "Label",
        h("input", { type: "text", id: "token-label", name: "label", maxlength: 100 }),
        "Whose or which tool's.",
      ),
      h("button", { type: "submit", class: "primary" }, "Create token"),
    );
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      const label = form.elements.label.value;
      try {
        const { data: made } = await call("POST", "/tokens", label ? { label } : {});
        fieldProblems(form, undefined);
        await showSecret(
          "The new admin token",
          "Admin token",
          made.token,
          `${made.id}${made.label ? `, "${made.label}"` : ""}. Send it as 'Authorization: Bearer <token>'.`,
        );
        await reload("token-label", `Created ${made.id}: the token was shown once.`);
      } catch (error) {
        refused(form, "create the token", error);
      }
    });
    fill(
      root,
      h("h2", { id: "view-title", tabindex: -1 }, "Admin tokens"),
      h(
        "table",
        { id: "tokens", class: "cards" },
        h("caption", { class: "visually-hidden" }, "Admin tokens, oldest first"),
        h(
          "thead",
          {},
          h(
            "tr",
            {},
            ["Token", "Label", "Created", "State", "Actions"].map((name) => h("th", { scope: "col" }, name)),
          ),
        ),
        h(
          "tbody",
          {},
          data.map((token) => row(token, reload)),
        ),
      ),
      form,
      h(
        "p",
        { class: "hint" },
        "Each creation and revocation is in the audit trail under the token's id. Times in UTC.",
      ),
    );
    return `${data.length} admin tokens.`;
  },
};
