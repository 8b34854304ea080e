// The operator's console: plain DOM and fetch, ES modules served by the admin listener, no
// build step, nothing loaded from elsewhere. Each view is a module of its own (`path`, `title`,
// `render(root, query, match, reload)` filling `root` and resolving with what the status line
// says of it): a new view is one more module in VIEWS and one more link in the page's nav.

import { accountView } from "./account-view.mjs";
import { accountsView } from "./accounts-view.mjs";
import { call, SignedOut, signedIn, useToken, whenRefused } from "./api.mjs";
import { auditView } from "./audit-view.mjs";
import { keyView } from "./key-view.mjs";
import { keysView } from "./keys-view.mjs";
import { tokensView } from "./tokens-view.mjs";
import { $, failed, say } from "./ui.mjs";

const VIEWS = [keysView, keyView, accountsView, accountView, auditView, tokensView];

/** The view the address names (`#/keys/key_...?...`), its path's match and its query. */
function route() {
  const [path, query = ""] = (location.hash.slice(1) || "/keys").split("?");
  for (const view of VIEWS) {
    const match = view.path.exec(path);
    if (match) return { view, match, params: new URLSearchParams(query), path };
  }
  return { view: keysView, match: ["/keys"], params: new URLSearchParams(), path: "/keys" };
}

let shownPath;
/** What an action that moved to another view said, for that view's status line. */
let pending;

/**
 * Draws the view the address names (or `hash`, moving there), and says `message` (what an
 * action did) or what the view says of itself. Another view: the focus goes to its heading; the same view again (a filter
 * applied, a change saved): to `focusId`, or to what had it.
 */
async function render(focusId, message, hash) {
  if (!signedIn()) return;
  // Another address: said once its view is drawn (on the hashchange).
  if (hash !== undefined && hash !== location.hash) {
    pending = message;
    location.hash = hash;
    return;
  }
  message ??= pending;
  pending = undefined;
  const { view, match, params, path } = route();
  const keep = focusId ?? (path === shownPath ? document.activeElement?.id : undefined);
  const root = $("view");
  const fresh = document.createElement("div");
  try {
    const summary = await view.render(fresh, params, match, render);
    say(message ?? summary);
  } catch (error) {
    if (error instanceof SignedOut) return;
    fresh.replaceChildren();
    failed(`Could not show ${view.title.toLowerCase()}`, error);
  }
  root.replaceChildren(...fresh.childNodes);
  document.title = `${view.title} - Pet Store console`;
  for (const link of document.querySelectorAll("#nav a"))
    if (link.getAttribute("href") === `#${path}`) link.setAttribute("aria-current", "page");
    else link.removeAttribute("aria-current");
  const target = (keep && document.getElementById(keep)) || $("view-title") || root;
  (target.disabled || target.hidden ? ($("view-title") ?? root) : target).focus();
  shownPath = path;
}

function showSignedIn(yes) {
  $("sign-in").hidden = yes;
  for (const id of ["nav", "sign-out", "view"]) $(id).hidden = !yes;
  if (!yes) $("view").replaceChildren();
}

function signOut(message) {
  useToken("");
  shownPath = undefined;
  showSignedIn(false);
  say(message, message !== "Signed out.");
  $("token").focus();
}

whenRefused((message) => signOut(`${message}: sign in again.`));
$("sign-in").addEventListener("submit", async (event) => {
  event.preventDefault();
  useToken($("token").value.trim());
  $("token").value = "";
  // One read tells a refused token before anything is drawn.
  try {
    await call("GET", "/keys?limit=1");
  } catch (error) {
    if (!(error instanceof SignedOut)) {
      useToken("");
      failed("Could not sign in", error);
    }
    return;
  }
  showSignedIn(true);
  await render();
});
$("sign-out").addEventListener("click", () => signOut("Signed out."));
window.addEventListener("hashchange", () => render());

showSignedIn(signedIn());
if (signedIn()) render();
else $("token").focus();
