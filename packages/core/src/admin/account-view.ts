import { DEFAULT_PLANS, limitsResolver, type PlanLimits } from "../plans.js";
import type { AccountRecord, PlanName } from "../ports.js";
import { iso } from "./key-view.js";
import type { AccountView } from "./schemas.js";

/**
 * An account as the admin API shows it: its name and plan, the limits its keys count against
 * together (its own, or its plan's, as the limiter takes them), its ranges, and how many keys it has.
 * @example const view = accountView(account, (await keys.countKeys([account.id]))[account.id]!);
 */
export function accountView(
  record: AccountRecord,
  keys: number,
  plans: Partial<Record<PlanName, PlanLimits>> = {},
): AccountView {
  const [minute, day] = limitsResolver({ ...DEFAULT_PLANS, ...plans })(record).windows;
  return {
    id: record.id,
    name: record.name,
    plan: record.plan,
    perMinute: minute.limit,
    perDay: day.limit,
    ownLimits: record.perMinute !== undefined || record.perDay !== undefined,
    allowFrom: record.allowFrom ?? null,
    createdAt: iso(record.createdAt)!,
    keys,
  };
}
