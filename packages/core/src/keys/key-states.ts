import type { ApiKeyRecord, KeyRecordState } from "../ports.js";

/** Every state a key can be in, as the admin API filters and shows them. */
export const KEY_STATES = ["active", "rolling", "banned", "expired", "revoked"] as const;
export type KeyState = (typeof KEY_STATES)[number];

/** Whether the key's record is in `state` at `now` (Unix ms, the store's instant): the rule every key store's list follows. */
export function keyRecordIs(record: ApiKeyRecord, state: KeyRecordState, now: number): boolean {
  const revoked = record.revokedAt !== undefined;
  const expired = record.expiresAt !== undefined && record.expiresAt <= now;
  if (state === "revoked") return revoked;
  if (state === "expired") return expired;
  if (state === "rolling") return !revoked && record.rolled !== undefined && record.rolled.until > now;
  return !revoked && !expired;
}

/**
 * Every state the key is in at `now`, at once: `revoked`, `expired`, `banned` (a live key whose
 * ban, `bannedUntil` from the limiter, runs), `rolling`, and `active` for a live key not banned.
 * A key both banned and rolled is both.
 * @example keyStates(record, Date.now(), decision.bannedUntil) // ["banned", "rolling"]
 */
export function keyStates(record: ApiKeyRecord, now: number, bannedUntil?: number): KeyState[] {
  const live = keyRecordIs(record, "live", now);
  const banned = live && bannedUntil !== undefined && bannedUntil > now;
  const states: KeyState[] = [];
  if (keyRecordIs(record, "revoked", now)) states.push("revoked");
  if (keyRecordIs(record, "expired", now)) states.push("expired");
  if (banned) states.push("banned");
  if (live && !banned) states.push("active");
  if (keyRecordIs(record, "rolling", now)) states.push("rolling");
  return states;
}
