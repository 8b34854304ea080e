// The admin API of the listener that served the page, called with the admin token the
// operator typed, kept in this tab (sessionStorage) only.

const API = "/admin/v1";
const STORED = "petstore-admin-token";

let token = sessionStorage.getItem(STORED) ?? "";
/** Told when the API refuses the token (401): the page signs out. */
let onRefused = () => {};

/** The admin API's answer that is no success: its message, and the body's `details` (which field, why). */
export class ApiProblem extends Error {
  constructor(status, body) {
    super(body.message ?? `The admin API answered ${status}`);
    this.status = status;
    this.details = body.details ?? [];
  }
}

/** Thrown after a 401 has signed the page out: the sign-in form says why, nothing else need. */
export class SignedOut extends Error {}

export const signedIn = () => token !== "";

/** The id of the token the page is signed in with (`tok_` and its name), to mark it among the tokens. */
export const tokenId = () => (/^psa_([0-9A-Za-z]{12})/.exec(token) ? `tok_${token.slice(4, 16)}` : undefined);

export function useToken(value) {
  token = value;
  if (value) sessionStorage.setItem(STORED, value);
  else sessionStorage.removeItem(STORED);
}

export function whenRefused(refused) {
  onRefused = refused;
}

/**
 * `method` on a path of the API (`/keys`) or a whole one from a Link header: the JSON body,
 * and the next page's path when there is one.
 */
export async function call(method, path, body) {
  const sent = { Authorization: `Bearer ${token}`, Accept: "application/json" };
  if (body !== undefined) sent["Content-Type"] = "application/json";
  const response = await fetch(path.startsWith(API) ? path : `${API}${path}`, {
    method,
    headers: sent,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const data = await response.json().catch(() => ({}));
  if (response.status === 401) {
    onRefused(data.message === "The admin token was refused" ? data.message : "An admin token is required");
    throw new SignedOut();
  }
  if (!response.ok) throw new ApiProblem(response.status, data);
  const next = /<([^>]+)>;\s*rel="next"/.exec(response.headers.get("link") ?? "")?.[1];
  return { data, next };
}
