/**
 * "Your" code: a job that keeps the shop stocked through the Pet Store API. It takes the
 * fetch function it calls, so its tests can hand it the API in memory instead of a server.
 */

export interface PetstoreApi {
  /** The API's base address, `/v1` included. */
  baseUrl: string;
  apiKey: string;
  /** Default: the global `fetch`. */
  fetch?: (request: Request) => Promise<Response>;
}

export interface Pet {
  id: number;
  name: string;
  categoryId: number;
  status?: "available" | "pending" | "sold";
}

/** An error answer of the Pet Store; `retryAfter` (seconds) is set when it said 429. */
export class PetstoreError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly retryAfter?: number,
  ) {
    super(message);
  }
}

async function call<T>(api: PetstoreApi, path: string, init: RequestInit = {}): Promise<T> {
  const request = new Request(`${api.baseUrl}${path}`, init);
  request.headers.set("Authorization", `Bearer ${api.apiKey}`);
  const response = await (api.fetch ?? fetch)(request);
  if (response.ok) return (await response.json()) as T;
  const error = (await response.json()) as { code: string; message: string };
  const retryAfter = response.headers.get("Retry-After");
  throw new PetstoreError(
    response.status,
    error.code,
    error.message,
    retryAfter === null ? undefined : Number(retryAfter),
  );
}

/** Adds available pets to `categoryId` until it has `target` of them; returns the pets it added. */
export async function restock(api: PetstoreApi, categoryId: number, target: number): Promise<Pet[]> {
  const available = await call<Pet[]>(api, "/pets?status=available&limit=100");
  const stocked = available.filter((pet) => pet.categoryId === categoryId).length;
  const added: Pet[] = [];
  for (let n = stocked + 1; n <= target; n++) {
    const pet = { name: `Stray ${n}`, categoryId, status: "available" };
    added.push(
      await call<Pet>(api, "/pets", {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify(pet),
      }),
    );
  }
  return added;
}
