/**
 * A database or limiter URL as logs, errors and the listening line show it: without its user
 * information, up to the last `@` before the path (a password may hold an `@`, `?` or `#` of
 * its own), then without its query and fragment (`?password=`, `?authToken=`). A path or
 * `:memory:` is shown as it is.
 */
export function shownUrl(url: string): string {
  return url.replace(/^([a-z][a-z0-9+.-]*:\/\/)[^/]*@/i, "$1").replace(/[?#].*$/s, "");
}
