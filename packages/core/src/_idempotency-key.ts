import { sha256Hex } from "./_sha256.js";
import { ApiError } from "./errors.js";

/** An Idempotency-Key: 1 to 255 printable ASCII characters but the comma (a repeated header arrives joined by commas). */
export const IDEMPOTENCY_KEY = /^[\x20-\x2b\x2d-\x7e]{1,255}$/;

/** What tells two bodies sent with one Idempotency-Key apart: neither key order nor whitespace. */
export function bodyFingerprint(body: unknown): Promise<string> {
  return sha256Hex(canonicalJson(body));
}

function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (typeof value === "object" && value !== null) {
    const entries = Object.keys(value)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${canonicalJson((value as Record<string, unknown>)[key])}`);
    return `{${entries.join(",")}}`;
  }
  return JSON.stringify(value);
}

/** The answer to an Idempotency-Key whose first request still runs (409), or that came with another body (422). */
export function idempotencyRefusal(found: "in_progress" | "mismatch"): ApiError {
  return found === "in_progress"
    ? new ApiError(
        "idempotency_key_in_use",
        "A request with this Idempotency-Key is still being processed; retry later",
      )
    : new ApiError("idempotency_key_reused", "This Idempotency-Key was already used with a different request body");
}
