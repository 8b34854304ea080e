import type { ApiKeyRecord, KeyRecordState } from "../ports.js";

/** Whether the key's record is in `state` at `now` (Unix ms, the store's instant): the rule every key store's list follows. */
export function keyRecordIs(record: ApiKeyRecord, state: KeyRecordState, now: number): boolean {
  const revoked = record.revokedAt !== undefined;
  const expired = record.expiresAt !== undefined && record.expiresAt <= now;
  if (state === "revoked") return revoked;
  if (state === "expired") return expired;
  if (state === "rolling") return !revoked && record.rolled !== undefined && record.rolled.until > now;
  return !revoked && !expired;
}
