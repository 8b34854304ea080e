import type { AuditNote } from "@petstore/core";

/**
 * The audit note of what a key's write did to the account made for it, under the account's
 * id: the key's actor, and the account's fields it set (`name` when made, plan and limits; `null`
 * for a limit removed). Undefined without a note, or when the write set none of them.
 */
export function accountNote(
  note: AuditNote | undefined,
  fields: { [field in "name" | "plan" | "perMinute" | "perDay"]?: string | number | null | undefined },
): AuditNote | undefined {
  if (note === undefined) return undefined;
  const details: Record<string, unknown> = {};
  for (const field of ["name", "plan", "perMinute", "perDay"] as const)
    if (fields[field] !== undefined) details[field] = fields[field];
  return Object.keys(details).length === 0 ? undefined : { actor: note.actor, details };
}
