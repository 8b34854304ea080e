/**
 * The answer to a `HEAD`: the `GET` answer's status and headers without its body, and the
 * body's length as `Content-Length` (RFC 9110 section 9.3.2). Without it, runtimes such as
 * Bun and Deno send `Content-Length: 0`, which tells a client the resource is empty.
 * @example if (request.method === "HEAD") response = await headResponse(response);
 */
export async function headResponse(response: Response): Promise<Response> {
  const headers = new Headers(response.headers);
  headers.set("Content-Length", String((await response.arrayBuffer()).byteLength));
  return new Response(null, { status: response.status, headers });
}
