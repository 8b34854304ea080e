const SCHEME = /^[a-z][a-z0-9+.-]*:\/\//i;
const QUERY = /[?#].*$/s;

/**
 * A database or limiter URL as logs, errors and the listening line show it: without its user
 * information (up to the last `@` before the path: a password may hold an `@` of its own) and
 * without its query and fragment (`?password=`, `?authToken=`). When a `?` or `#` comes before
 * that `@`, either the query holds an `@` (`?user=me@corp&password=...`) or the password a
 * `?`: where the host begins cannot be told, and none of the authority is shown. A path or
 * `:memory:` is shown without its query.
 */
export function shownUrl(url: string): string {
  const scheme = SCHEME.exec(url)?.[0];
  if (scheme === undefined) return url.replace(QUERY, "");
  const rest = url.slice(scheme.length);
  const slash = rest.indexOf("/");
  const authority = slash === -1 ? rest : rest.slice(0, slash);
  const path = slash === -1 ? "" : rest.slice(slash);
  const at = authority.lastIndexOf("@");
  if (at !== -1 && /[?#]/.test(authority.slice(0, at)))
    return `${scheme}(not shown: it may hold a password)${path.replace(QUERY, "")}`;
  return (scheme + authority.slice(at + 1) + path).replace(QUERY, "");
}
