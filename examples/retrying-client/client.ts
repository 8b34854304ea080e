import ky, { isHTTPError, type KyInstance } from "ky";

/**
 * A ky instance for the Pet Store that honours its limits: on 429 (and 503) it waits the
 * `Retry-After` the server sent, then tries again. POST is retried too, which is safe only
 * because every POST carries an `Idempotency-Key`: one of the caller's, else one made here,
 * kept across its retries. A 503 to a create may come after the pet was stored (the database
 * answered too late); the retry with the same key then replays its 201 instead of storing a
 * second pet.
 */
export function petstoreClient(baseUrl: string, apiKey: string) {
  return ky.create({
    prefixUrl: baseUrl,
    headers: { Authorization: `Bearer ${apiKey}` },
    retry: {
      limit: 3,
      methods: ["get", "post"],
      statusCodes: [429, 503],
      afterStatusCodes: [429, 503],
      // A minute window resets within 60 s; a longer Retry-After (a ban) is cut to 60 s per
      // try, so after `limit` tries the call fails instead of hanging for the whole ban.
      maxRetryAfter: 60_000,
    },
    hooks: {
      // Runs before every try of a request: the key is set once, on the request its retries reuse.
      beforeRequest: [
        (request) => {
          if (request.method === "POST" && !request.headers.has("Idempotency-Key"))
            request.headers.set("Idempotency-Key", crypto.randomUUID());
        },
      ],
      beforeRetry: [
        ({ error, retryCount }) => {
          const status = isHTTPError(error) ? error.response.status : error.message;
          const retryAfter = isHTTPError(error) ? error.response.headers.get("Retry-After") : null;
          console.log(`retry ${retryCount} after ${status}, having waited Retry-After: ${retryAfter} s`);
        },
      ],
    },
  });
}

export interface Pet {
  id: number;
  name: string;
  categoryId: number;
  status?: "available" | "pending" | "sold";
}

/** Creates a pet; the client's Idempotency-Key goes with every retry, so it is created exactly once. */
export function addPet(client: KyInstance, pet: Omit<Pet, "id">): Promise<Pet> {
  return client.post("pets", { json: pet }).json<Pet>();
}
