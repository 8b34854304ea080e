/** Requests to a running server, authenticated with `key` when given. */
export function client(baseUrl: string, key?: string) {
  return (path: string, init: RequestInit & { json?: unknown } = {}): Promise<Response> => {
    const headers = new Headers(init.headers);
    if (key !== undefined && !headers.has("authorization")) headers.set("authorization", `Bearer ${key}`);
    let body = init.body;
    if (init.json !== undefined) {
      headers.set("content-type", "application/json");
      body = JSON.stringify(init.json);
    }
    return fetch(new URL(path, baseUrl), { ...init, headers, body: body ?? null });
  };
}

/** Every pet, following `Link: rel="next"` from page to page (at most 1,000 pages). */
export async function listAllPets(request: ReturnType<typeof client>): Promise<{ id: number; name: string }[]> {
  const pets: { id: number; name: string }[] = [];
  let next: string | undefined = "/v1/pets?limit=100";
  for (let page = 0; next !== undefined && page < 1_000; page++) {
    const response = await request(next);
    if (response.status !== 200) throw new Error(`GET ${next}: ${response.status} ${await response.text()}`);
    pets.push(...((await response.json()) as { id: number; name: string }[]));
    next = /^<([^>]+)>; rel="next"$/.exec(response.headers.get("link") ?? "")?.[1];
  }
  return pets;
}
