import { describe, expect, it } from "vitest";
import { d1Adapters } from "./d1/index.js";
import { durableObjectLimiter } from "./durable-objects/index.js";
import { libsqlAdapters } from "./libsql/index.js";
import { memoryStore } from "./memory/index.js";
import { postgresAdapters } from "./postgres/index.js";
import { redisLimiter } from "./redis/index.js";

/** An adapter's factory given nothing, or the wrong thing, at construction: one TypeError saying what it needs. */
const given = (value: unknown) => value as never;

describe("the adapters' constructors", () => {
  it("say what the libSQL adapters need", () => {
    expect(() => libsqlAdapters(given(undefined))).toThrow(
      new TypeError(
        'The libSQL adapters need a database: what connectLibsql returned, or { client } of @libsql/client, e.g. libsqlAdapters(await connectLibsql({ url: "file:petstore.db" }))',
      ),
    );
    expect(() => libsqlAdapters(given({ client: "file:petstore.db" }))).toThrow(
      new TypeError("The libSQL adapters' { client } must be a client of @libsql/client (createClient({ url }))"),
    );
  });

  it("say what the Postgres adapters need", () => {
    expect(() => postgresAdapters(given({ sql: "postgres://localhost/petstore" }))).toThrow(
      new TypeError(
        "The Postgres adapters need { sql }: a postgres.js sql or Bun.sql, e.g. postgresAdapters({ sql: postgres(process.env.DATABASE_URL) })",
      ),
    );
  });

  it("say what the D1 adapters need", () => {
    expect(() => d1Adapters(given(undefined))).toThrow(
      new TypeError("The D1 adapters need the D1 binding of your Worker, e.g. d1Adapters(env.DB)"),
    );
  });

  it("say what the Redis and Durable Object limiters need", () => {
    expect(() => redisLimiter(given({}))).toThrow(
      new TypeError(
        "redisLimiter needs send, a function that sends one command to Redis, e.g. redisLimiter({ send: (args) => redis.call(args[0]!, ...args.slice(1)) })",
      ),
    );
    expect(() => durableObjectLimiter(given(undefined))).toThrow(
      new TypeError(
        "durableObjectLimiter needs the Durable Object namespace bound to PetstoreRateLimiter, e.g. durableObjectLimiter(env.LIMITER)",
      ),
    );
  });

  it("say which idempotency store a memory store completes", () => {
    expect(() => memoryStore({ idempotency: given({ claim: async () => ({ state: "claimed" }) }) })).toThrow(
      new TypeError("memoryStore completes the claims of a memoryIdempotency() only: memoryAdapters() wires the two"),
    );
  });
});
