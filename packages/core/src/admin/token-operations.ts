import { ApiError } from "../errors.js";
import { once } from "../keys/_once.js";
import { randomBase62 } from "../keys/api-key.js";
import type { AdminTokenRecord, AdminTokens } from "../ports.js";
import { iso } from "./key-view.js";
import {
  type AdminDeps,
  type Call,
  defined,
  idempotencyKeyOf,
  type Outcome,
  REPLAYED,
  readBody,
  refusedKey,
  ruled,
} from "./operations.js";
import { NewAdminTokenSchema } from "./schemas.js";
import { adminTokenNameFor, makeAdminToken, revokeAdminToken } from "./tokens.js";

/** An admin token as the admin API shows it: never the token nor its hash. */
const tokenView = (record: AdminTokenRecord) => ({
  id: record.id,
  label: record.label ?? null,
  createdAt: iso(record.createdAt)!,
  revokedAt: iso(record.revokedAt),
});

/** The admin tokens, or the 404 of an admin API whose host keeps none (its own authentication). */
function tokensOf(deps: AdminDeps): AdminTokens {
  if (!deps.tokens)
    throw new ApiError("not_found", "This admin API manages no admin tokens (createAdmin was given none)");
  return deps.tokens;
}

type TokenCreate =
  | { state: "created"; token: string; record: AdminTokenRecord }
  | { state: "replayed"; record: AdminTokenRecord }
  | { state: "idempotency_key_reused" };

export const tokenOperations = {
  /** `GET /tokens`: every admin token, revoked ones too, in the order they were made. */
  async listTokens(_call: Call, deps: AdminDeps): Promise<Outcome> {
    return { status: 200, body: (await tokensOf(deps).list()).map(tokenView) };
  },

  /**
   * `POST /tokens`: a new admin token, shown once, its creation audited. With an
   * Idempotency-Key a retry is answered as the first attempt was, without the token (never
   * kept): its name derives from the actor and that key, so a retry after a crash finds it.
   */
  async createToken(call: Call, deps: AdminDeps): Promise<Outcome> {
    const tokens = tokensOf(deps);
    const value = defined(await readBody(call, deps, NewAdminTokenSchema, "new admin token"));
    const idempotencyKey = idempotencyKeyOf(call, deps);
    const name =
      idempotencyKey === undefined ? randomBase62(12) : await adminTokenNameFor(call.actor.who, idempotencyKey);
    const found = async (): Promise<TokenCreate | undefined> => {
      const record = await tokens.get(`tok_${name}`);
      if (!record) return undefined;
      // Its first attempt made it, or (a day later) a request with another body: said so.
      return record.label === value.label ? { state: "replayed", record } : { state: "idempotency_key_reused" };
    };
    const created = await once<TokenCreate, TokenCreate>(
      deps.idempotency,
      { scope: `admin-tokens:${call.actor.who}`, key: idempotencyKey, asked: { createToken: value } },
      async () =>
        (idempotencyKey !== undefined && (await found())) || {
          state: "created",
          ...(await ruled("a valid NewAdminToken", () =>
            makeAdminToken(tokens, name, value, { keys: deps.keys, actor: call.actor }),
          )),
        },
      async () => (await found())!,
    );
    if (created.state !== "created" && created.state !== "replayed") refusedKey(created);
    const location = { Location: `${call.basePath}/tokens/${created.record.id}` };
    return {
      status: 201,
      body: { ...tokenView(created.record), token: created.state === "created" ? created.token : null },
      headers: created.state === "created" ? location : { ...location, ...REPLAYED },
    };
  },

  /** `POST /tokens/{id}/revoke`: refused by the admin API from now on; revoking again answers the token as it is. */
  async revokeToken(call: Call, deps: AdminDeps): Promise<Outcome> {
    const tokens = tokensOf(deps);
    const revoked = await revokeAdminToken(tokens, call.id, { keys: deps.keys, actor: call.actor });
    if (revoked === "missing") throw new ApiError("not_found", `No admin token has the id ${call.id}`);
    return { status: 200, body: tokenView((await tokens.get(call.id))!) };
  },
};
