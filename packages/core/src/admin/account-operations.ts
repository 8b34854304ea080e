import { ApiError } from "../errors.js";
import { accountKeyIds, createAccount, createAccountOnce, updateAccount } from "../keys/account-life.js";
import { PLAN_NAMES } from "../keys/rules.js";
import type { AccountRecord } from "../ports.js";
import { accountView } from "./account-view.js";
import {
  type AdminDeps,
  type Call,
  choice,
  cursorOf,
  defined,
  fromCursor,
  idempotencyKeyOf,
  type Outcome,
  pageLimit,
  queryParameter,
  REPLAYED,
  readBody,
  refusedKey,
  ruled,
} from "./operations.js";
import { AccountChangesSchema, NewAccountSchema } from "./schemas.js";

/** The accounts as the admin API shows them, each with how many keys it has (one read for all). */
async function viewsOf(records: AccountRecord[], deps: AdminDeps) {
  const counts = await deps.keys.countKeys(records.map((record) => record.id));
  return records.map((record) => accountView(record, counts[record.id] ?? 0, deps.plans));
}

const viewOf = async (record: AccountRecord, deps: AdminDeps) => (await viewsOf([record], deps))[0]!;

const missing = (id: string) => new ApiError("not_found", `No account has the id ${id}`);

/** An account's operations: the same as `petstore accounts`, every change audited by the account life. */
export const accountOperations = {
  /** `GET /accounts`: a page of accounts in the order they were made, of one `plan`. */
  async listAccounts(call: Call, deps: AdminDeps): Promise<Outcome> {
    const limit = pageLimit(call.url);
    const cursor = queryParameter(call.url, "cursor");
    const plan = choice(call.url, "plan", PLAN_NAMES);
    const afterId = cursor === undefined ? undefined : fromCursor(cursor);
    const batch = await deps.keys.listAccounts({
      limit: limit + 1,
      ...(afterId !== undefined && { afterId }),
      ...(plan !== undefined && { plan }),
    });
    const page = batch.slice(0, limit);
    const nextCursor = batch.length > limit ? cursorOf(page.at(-1)!.id) : null;
    const headers: Record<string, string> = {};
    if (nextCursor !== null) {
      const next = new URLSearchParams({
        limit: String(limit),
        ...(plan !== undefined && { plan }),
        cursor: nextCursor,
      });
      headers.Link = `<${call.basePath}/accounts?${next}>; rel="next"`;
    }
    return { status: 200, body: { accounts: await viewsOf(page, deps), nextCursor }, headers };
  },

  /** `POST /accounts`: a new account; with an Idempotency-Key a retry is answered as the first attempt was. */
  async createAccount(call: Call, deps: AdminDeps): Promise<Outcome> {
    const value = await readBody(call, deps, NewAccountSchema, "new account");
    const idempotencyKey = idempotencyKeyOf(call, deps);
    const input = { ...defined(value), name: value.name, plan: value.plan };
    const created = await ruled("new account", async () =>
      idempotencyKey === undefined
        ? { state: "created" as const, record: await createAccount(deps.keys, input, { actor: call.actor }) }
        : createAccountOnce(deps.keys, deps.idempotency!, input, { actor: call.actor, idempotencyKey }),
    );
    if (created.state !== "created" && created.state !== "replayed") refusedKey(created);
    const location = { Location: `${call.basePath}/accounts/${created.record.id}` };
    return {
      status: 201,
      body: await viewOf(created.record, deps),
      headers: created.state === "created" ? location : { ...location, ...REPLAYED },
    };
  },

  async getAccount(call: Call, deps: AdminDeps): Promise<Outcome> {
    const record = await deps.keys.getAccount(call.id);
    if (!record) throw missing(call.id);
    return { status: 200, body: await viewOf(record, deps) };
  },

  /** `PATCH /accounts/{id}`: name, plan, limits (`null`: the plan's again), ranges (`null`: any address); its keys that had its plan and limits follow. */
  async updateAccount(call: Call, deps: AdminDeps): Promise<Outcome> {
    const value = await readBody(call, deps, AccountChangesSchema, "change to an account");
    const change = await ruled("change to an account", () =>
      updateAccount(deps.keys, call.id, defined(value), call.actor),
    );
    if (change.state === "missing") throw missing(call.id);
    // Its keys took its new plan and limits, and read its ranges: this process's API applies them at once.
    if (deps.onKeyChange) for (const keyId of await accountKeyIds(deps.keys, call.id)) deps.onKeyChange(keyId);
    return { status: 200, body: await viewOf(change.record, deps) };
  },
};
