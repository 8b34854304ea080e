// The operator's page: plain DOM and fetch, no build step, nothing loaded from elsewhere. It
// talks to the admin API of the listener that served it, with the admin token the operator
// typed, kept in this tab (sessionStorage) only.

const API = "/admin/v1";
const $ = (id) => document.getElementById(id);
const status = $("status");
let token = sessionStorage.getItem("petstore-admin-token") ?? "";
/** Where the next page of keys starts, from the last page's Link header. */
let nextPage;

function say(text, isError = false) {
  status.textContent = text;
  status.classList.toggle("error", isError);
}

async function call(method, path, body) {
  const headers = { Authorization: `Bearer ${token}` };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  // A path of the API ("/keys"), or a whole one from a Link header ("/admin/v1/keys?...").
  const response = await fetch(path.startsWith(API) ? path : `${API}${path}`, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const data = await response.json().catch(() => ({}));
  if (response.status === 401) signOut("The admin token was refused: sign in again.");
  if (!response.ok) {
    const details = (data.details ?? []).map((detail) => `${detail.path}: ${detail.message}`).join("; ");
    throw new Error(`${data.message ?? response.statusText}${details ? ` (${details})` : ""}`);
  }
  return { data, link: response.headers.get("link") };
}

const when = (iso) => (iso === null ? "never" : new Date(iso).toLocaleString());

/** What the key is now, in a few words, with the class that colours it. */
function stateOf(key) {
  const now = Date.now();
  if (key.revokedAt) return ["revoked", `revoked ${when(key.revokedAt)}`];
  if (key.expiresAt && Date.parse(key.expiresAt) <= now) return ["expired", `expired ${when(key.expiresAt)}`];
  if (key.usage?.bannedUntil) return ["banned", `banned until ${when(key.usage.bannedUntil)}`];
  if (key.rolling) return ["rolling", `rolled: old secret works until ${when(key.rolling.until)}`];
  if (key.expiresAt) return ["expiring", `expires ${when(key.expiresAt)}`];
  return ["active", "active"];
}

function button(text, label, onClick) {
  const element = document.createElement("button");
  element.type = "button";
  element.textContent = text;
  element.setAttribute("aria-label", label);
  element.addEventListener("click", onClick);
  return element;
}

function row(key) {
  const tr = document.createElement("tr");
  tr.dataset.id = key.id;
  const cell = () => tr.appendChild(document.createElement("td"));
  const name = cell();
  name.innerHTML = '<span class="id"></span><span class="label"></span>';
  name.querySelector(".id").textContent = key.id;
  name.querySelector(".label").textContent = key.label ?? "";
  cell().textContent = `${key.plan} (${key.perMinute}/min)`;
  const today = cell();
  if (key.usage) {
    const meter = document.createElement("meter");
    meter.max = key.usage.day.limit;
    meter.value = key.usage.day.used;
    meter.setAttribute("aria-label", `${key.id}: ${key.usage.day.used} of ${key.usage.day.limit} today`);
    today.append(meter, ` ${key.usage.day.used} / ${key.usage.day.limit}`);
  } else today.textContent = "-";
  cell().textContent = when(key.lastUsedAt);
  const [kind, text] = stateOf(key);
  const state = cell();
  state.className = `state-${kind}`;
  state.textContent = text;
  const actions = cell();
  actions.className = "actions";
  if (!key.revokedAt) {
    actions.append(button("Roll", `Roll ${key.id}`, () => openRoll(key)));
    actions.append(button("Revoke", `Revoke ${key.id}`, () => openRevoke(key)));
  }
  if (key.usage?.bannedUntil && !key.revokedAt)
    actions.append(button("Lift ban", `Lift the ban of ${key.id}`, () => unban(key)));
  return tr;
}

async function loadKeys(more = false) {
  const q = $("q").value.trim();
  const path = more ? nextPage : `/keys?limit=50${q ? `&q=${encodeURIComponent(q)}` : ""}`;
  const { data, link } = await call("GET", path);
  const body = $("keys").tBodies[0];
  if (!more) body.replaceChildren();
  for (const key of data) body.appendChild(row(key));
  nextPage = /<([^>]+)>;\s*rel="next"/.exec(link ?? "")?.[1];
  $("more").hidden = nextPage === undefined;
  if (!more)
    say(
      data.length === 0
        ? q
          ? `No key matches "${q}".`
          : "No keys yet: create one below."
        : `${data.length}${nextPage ? "+" : ""} keys.`,
    );
}

function replaceRow(key) {
  const old = document.querySelector(`#keys tr[data-id="${key.id}"]`);
  if (old) old.replaceWith(row(key));
}

function showSecret(key, note) {
  $("secret-value").value = key.key ?? "";
  $("secret-note").textContent = note;
  $("secret").showModal();
  $("secret-value").select();
}

function openRoll(key) {
  $("roll-key").textContent = key.id;
  const dialog = $("roll");
  dialog.onclose = async () => {
    if (dialog.returnValue !== "roll") return;
    try {
      const { data } = await call("POST", `/keys/${key.id}/roll`, { overlapSeconds: Number($("overlap").value) });
      replaceRow(data);
      showSecret(
        data,
        data.rolling ? `The old secret works until ${when(data.rolling.until)}.` : "The old secret no longer works.",
      );
      say(`Rolled ${key.id}.`);
    } catch (error) {
      say(`Could not roll ${key.id}: ${error.message}`, true);
    }
  };
  dialog.returnValue = "";
  dialog.showModal();
}

function openRevoke(key) {
  $("confirm-key").textContent = key.id;
  const dialog = $("confirm");
  dialog.onclose = async () => {
    if (dialog.returnValue !== "revoke") return;
    try {
      replaceRow((await call("POST", `/keys/${key.id}/revoke`)).data);
      say(`Revoked ${key.id}: every server refuses it within 5 seconds.`);
    } catch (error) {
      say(`Could not revoke ${key.id}: ${error.message}`, true);
    }
  };
  dialog.returnValue = "";
  dialog.showModal();
}

async function unban(key) {
  try {
    const { data } = await call("POST", `/keys/${key.id}/unban`);
    replaceRow(data);
    say(data.unbanned ? `Lifted the ban of ${key.id}.` : `${key.id} was not banned.`);
  } catch (error) {
    say(`Could not lift the ban of ${key.id}: ${error.message}`, true);
  }
}

function signOut(message) {
  token = "";
  sessionStorage.removeItem("petstore-admin-token");
  for (const id of ["keys-section", "create-section", "sign-out"]) $(id).hidden = true;
  $("sign-in").hidden = false;
  say(message);
}

async function signIn() {
  $("sign-in").hidden = true;
  for (const id of ["keys-section", "create-section", "sign-out"]) $(id).hidden = false;
  await loadKeys();
}

$("sign-in").addEventListener("submit", async (event) => {
  event.preventDefault();
  token = $("token").value.trim();
  sessionStorage.setItem("petstore-admin-token", token);
  $("token").value = "";
  await signIn().catch((error) => say(error.message, true));
});
$("sign-out").addEventListener("click", () => signOut("Signed out."));
$("search").addEventListener("submit", (event) => {
  event.preventDefault();
  loadKeys().catch((error) => say(error.message, true));
});
$("more").addEventListener("click", () => loadKeys(true).catch((error) => say(error.message, true)));
$("plan").addEventListener("change", () => {
  const enterprise = $("plan").value === "enterprise";
  $("per-minute").required = enterprise;
  $("per-day").required = enterprise;
});
$("create").addEventListener("submit", async (event) => {
  event.preventDefault();
  const form = new FormData(event.target);
  const body = { plan: form.get("plan") };
  if (form.get("label")) body.label = form.get("label");
  for (const field of ["perMinute", "perDay"]) if (form.get(field)) body[field] = Number(form.get(field));
  if (form.get("expiresAt")) body.expiresAt = new Date(form.get("expiresAt")).toISOString();
  try {
    const { data } = await call("POST", "/keys", body);
    event.target.reset();
    await loadKeys();
    showSecret(data, `${data.id}, ${data.plan}${data.label ? `, "${data.label}"` : ""}.`);
    say(`Created ${data.id}.`);
  } catch (error) {
    say(`Could not create the key: ${error.message}`, true);
  }
});
$("copy").addEventListener("click", async () => {
  await navigator.clipboard?.writeText($("secret-value").value).then(
    () => say("Copied."),
    () => say("Select the key and copy it.", true),
  );
});
$("secret-done").addEventListener("click", () => {
  $("secret-value").value = "";
  $("secret").close();
});

if (token) signIn().catch((error) => say(error.message, true));
