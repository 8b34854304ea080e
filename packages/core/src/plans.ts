import type { AccountLimits, BanPolicy, PlanName, WindowPair } from "./ports.js";

/** Requests per minute and per day of a plan. */
export interface PlanLimits {
  perMinute: number;
  perDay: number;
}

/**
 * The specification's plans. Enterprise numbers are agreed per key (set when the key is
 * made); these are its fallback for a key stored without them.
 */
export const DEFAULT_PLANS: Readonly<Record<PlanName, PlanLimits>> = {
  free: { perMinute: 60, perDay: 1_000 },
  pro: { perMinute: 300, perDay: 10_000 },
  business: { perMinute: 1_000, perDay: 100_000 },
  enterprise: { perMinute: 1_000, perDay: 100_000 },
};

export const DEFAULT_BAN: BanPolicy = { threshold: 30, seconds: 600 };

/** A caller's windows, and their `RateLimit-Policy` header, which only changes with them. */
export interface CallerLimits {
  windows: WindowPair;
  policy: string;
}

/**
 * The minute and day windows of a caller (a key, or an account); anonymous callers get the Free plan's (made once).
 * A key's are kept with its bucket (`chooseBucketStage`).
 */
export function limitsResolver(
  plans: Record<PlanName, PlanLimits>,
): (caller: AccountLimits | undefined) => CallerLimits {
  const make = (caller: AccountLimits | undefined): CallerLimits => {
    const plan = plans[caller?.plan ?? "free"];
    const windows: WindowPair = [
      { name: "minute", limit: caller?.perMinute ?? plan.perMinute, seconds: 60 },
      { name: "day", limit: caller?.perDay ?? plan.perDay, seconds: 86_400 },
    ];
    return { windows, policy: windows.map((w) => `"${w.name}";q=${w.limit};w=${w.seconds}`).join(", ") };
  };
  const anonymous = make(undefined);
  return (caller) => (caller ? make(caller) : anonymous);
}
