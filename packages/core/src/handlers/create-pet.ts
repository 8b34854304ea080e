import * as v from "valibot";
import { bodyFingerprint, IDEMPOTENCY_KEY, idempotencyRefusal } from "../_idempotency-key.js";
import { readJsonBody } from "../_json-body.js";
import type { Context, Handler } from "../context.js";
import { ApiError, StorageUnavailableError, UNAVAILABLE_RETRY_SECONDS } from "../errors.js";
import type { IdempotencyClaim } from "../ports.js";
import { type ErrorDetail, NewPetSchema, type Pet } from "../schemas.js";
import { json } from "./_respond.js";

const NEW_PET_FIELDS = new Set(Object.keys(NewPetSchema.entries));

function invalidBody(message: string, details: ErrorDetail[]): ApiError {
  return new ApiError("invalid_body", message, details);
}

/** The NewPet in a parsed body, or `invalid_body` listing every problem, phrased for a person. */
function readNewPet(body: unknown): v.InferOutput<typeof NewPetSchema> {
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw invalidBody("The request body is not a valid NewPet", [{ path: "", message: "must be a JSON object" }]);
  }
  const result = v.safeParse(NewPetSchema, body);
  if (result.success) return result.output;
  const problems: ErrorDetail[] = [];
  for (const issue of result.issues) {
    const path = v.getDotPath(issue) ?? "";
    // Unknown keys are listed below, all of them (valibot stops at the first).
    if (issue.type === "strict_object" && issue.expected === "never") continue;
    const missing = issue.type === "strict_object" && issue.input === undefined;
    problems.push({ path, message: missing ? "is required" : issue.message });
  }
  for (const field of Object.keys(body)) {
    if (NEW_PET_FIELDS.has(field)) continue;
    const message = field === "id" ? "is assigned by the service and must not be sent" : "is not a field of NewPet";
    problems.push({ path: field, message });
  }
  throw invalidBody("The request body is not a valid NewPet", problems);
}

/**
 * A create's 503 says what the server cannot know: a database that did not answer in time may
 * still commit the insert afterwards (a hung server that goes on), so the pet may exist. The
 * same Idempotency-Key finds out: it replays the 201 if it does, creates the pet if not.
 */
function outcomeUnknown(error: unknown, keyed: boolean): unknown {
  if (!(error instanceof StorageUnavailableError)) return error;
  const retry = keyed
    ? "retry with the same Idempotency-Key"
    : "send an Idempotency-Key with every create, so that a retry cannot store a second pet";
  return new ApiError(
    "service_unavailable",
    `Storage did not confirm the create; the pet may have been stored: ${retry}`,
    undefined,
    {
      "Retry-After": String(UNAVAILABLE_RETRY_SECONDS),
    },
  );
}

function created(ctx: Context, pet: Pet, replayed: boolean): Response {
  const headers: Record<string, string> = { Location: `${ctx.basePath}/pets/${pet.id}` };
  if (replayed) headers["Idempotent-Replayed"] = "true";
  return json(ctx, pet, 201, headers);
}

async function createOnce(ctx: Context, claim: IdempotencyClaim, body: v.InferOutput<typeof NewPetSchema>) {
  const found = await ctx.idempotency.claim(claim);
  switch (found.state) {
    case "in_progress":
    case "mismatch":
      throw idempotencyRefusal(found.state);
    case "done":
      // Scopes apart: a pet's claims are an API key's, those finished without a pet an operator's.
      throw new Error("An Idempotency-Key of a pet create was finished without a pet");
    case "completed": {
      const pet = await ctx.store.getPet(found.petId);
      if (!pet) throw new Error(`Idempotency record points at missing pet ${found.petId}`);
      return created(ctx, pet, true);
    }
    case "claimed":
      try {
        const done = await ctx.store.createClaimedPet(body, claim);
        // Another request took the claim over after its lease ran out: it may be storing the pet now.
        if (done.state === "claim_lost")
          throw new ApiError(
            "idempotency_key_in_use",
            "This Idempotency-Key was taken over by a newer request; retry later",
          );
        return created(ctx, done.pet, false);
      } catch (error) {
        await ctx.idempotency.release(claim).catch(() => {});
        throw error;
      }
  }
}

/**
 * `POST /pets` (createPet): validates a NewPet and stores it; `201` only after the write
 * committed. With an `Idempotency-Key`, a retry replays the first answer instead of creating
 * a second pet.
 */
export const createPet: Handler = async (request, ctx) => {
  const idempotencyKey = request.headers.get("idempotency-key");
  if (idempotencyKey !== null && !IDEMPOTENCY_KEY.test(idempotencyKey)) {
    const message = idempotencyKey.includes(",")
      ? "must be sent once, and a key holds no comma (a repeated header arrives joined by commas)"
      : "must be 1 to 255 printable ASCII characters other than the comma";
    throw new ApiError("invalid_parameter", `Header 'Idempotency-Key' ${message}`, [
      { path: "Idempotency-Key", message },
    ]);
  }
  const body = await readJsonBody(request, ctx.bodyTimeoutMs);
  const pet = readNewPet(body);

  try {
    if (idempotencyKey === null) return created(ctx, await ctx.store.createPet(pet), false);
    const claim = { scope: ctx.caller?.id ?? "", key: idempotencyKey, fingerprint: await bodyFingerprint(body) };
    return await createOnce(ctx, claim, pet);
  } catch (error) {
    throw outcomeUnknown(error, idempotencyKey !== null);
  }
};
