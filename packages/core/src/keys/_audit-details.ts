import type { KeyChanges } from "../ports.js";
import type { KeyFields } from "./rules.js";

/**
 * What the audit trail records of a new key or a change to one: every field it set or changed
 * (`null` for one removed), the expiry as ISO 8601 (a person reads the trail), never key
 * material. A roll records its overlap; a revocation and a lifted ban are said by the entry alone.
 */
export function auditDetails(fields: KeyFields | KeyChanges): Record<string, unknown> {
  const set = Object.entries(fields).filter(([, value]) => value !== undefined);
  return Object.fromEntries(
    set.map(([name, value]) => [name, name === "expiresAt" && value !== null ? new Date(value).toISOString() : value]),
  );
}
