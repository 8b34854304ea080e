/**
 * The path of an absolute request URL, without its query or fragment, found without parsing
 * the whole URL (this runs on every request). Not percent-decoded.
 * @example pathnameOf("http://localhost/v1/pets?limit=5") // "/v1/pets"
 */
export function pathnameOf(url: string): string {
  const start = url.indexOf("/", url.indexOf("//") + 2);
  if (start === -1) return "/";
  const query = url.indexOf("?", start);
  const fragment = url.indexOf("#", start);
  const end = query === -1 ? fragment : fragment === -1 ? query : Math.min(query, fragment);
  return end === -1 ? url.slice(start) : url.slice(start, end);
}
