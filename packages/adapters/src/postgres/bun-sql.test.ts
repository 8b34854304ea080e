import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { usePostgresDatabase } from "../../../../test/_support/postgres-database.js";

const ROOT = join(import.meta.dirname, "../../../..");
const database = usePostgresDatabase();

describe("Postgres adapters on Bun's built-in client", () => {
  it("store, keys, idempotency and limiter work through the same port with Bun.sql", async () => {
    const { schema, close } = await database.fresh();
    try {
      // Bun.SQL takes the schema through the URL's options, as a deployment would.
      const url = `${database.url}?options=${encodeURIComponent(`-c search_path=${schema}`)}`;
      const { stdout } = await promisify(execFile)(
        join(ROOT, "node_modules/.bin/bun"),
        ["--conditions=@petstore/source", join(ROOT, "test/_support/postgres-bun-sql.ts"), url],
        { cwd: ROOT, timeout: 60_000 },
      );
      const outcome = JSON.parse(stdout.trim().split("\n").at(-1)!);
      expect(outcome.created).toEqual(Array(10).fill(201));
      expect(new Set(outcome.ids).size).toBe(10);
      // One pet for the three requests with one Idempotency-Key: the others replay it (201) or find it in progress (409).
      const replays = outcome.replays as { status: number; id?: number }[];
      expect(replays.every(({ status }) => status === 201 || status === 409)).toBe(true);
      expect(new Set(replays.filter(({ status }) => status === 201).map(({ id }) => id)).size).toBe(1);
      expect(outcome.listed).toBe(11);
      expect(outcome.order).toMatchObject({ quantity: 2, status: "placed", complete: true });
      expect(outcome.admitted).toBe(46);
      expect(outcome.limited).toBe(4);
      expect(outcome.revoked).toBe(true);
      expect(outcome.keys).toEqual([{ plan: "free", label: "bun", revoked: true }]);
    } finally {
      await close();
    }
  });
});
