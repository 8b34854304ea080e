import { type AccountRecord, DEFAULT_PLANS } from "@petstore/core";
import type { Io } from "./_command.js";

/**
 * An account as the accounts commands print it: with `--json` its record, instants in ISO 8601,
 * its limits as they count (its own, else its plan's) and its ranges (`null`: any address), as
 * a key's view has them; otherwise one line.
 */
export function accountJson(account: AccountRecord): Record<string, unknown> {
  const plan = DEFAULT_PLANS[account.plan];
  return {
    id: account.id,
    name: account.name,
    plan: account.plan,
    perMinute: account.perMinute ?? plan.perMinute,
    perDay: account.perDay ?? plan.perDay,
    createdAt: new Date(account.createdAt).toISOString(),
    allowFrom: account.allowFrom ?? null,
  };
}

/** `acct_... "Shop" pro: 300 requests/minute, 10000 requests/day; allow from 10.0.0.0/8, 2001:db8::/32` */
export function accountLine(account: AccountRecord): string {
  const { perMinute, perDay } = accountJson(account);
  const from = account.allowFrom?.join(", ") ?? "any address";
  return `${account.id} ${JSON.stringify(account.name)} ${account.plan}: ${perMinute} requests/minute, ${perDay} requests/day; allow from ${from}`;
}

/** "No account has the id ..." on stderr, exit 1. */
export function noSuchAccount(io: Pick<Io, "err">, id: string): number {
  io.err(`petstore: no account has the id ${id} (see 'petstore accounts list')`);
  return 1;
}
