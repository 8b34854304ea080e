import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { libsqlAdapters, migrateLibsql } from "./index.js";
import { connectLibsql } from "./local/connect-libsql.js";

describe("connectLibsql's observer", () => {
  let dir: string | undefined;
  afterEach(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("hears every group commit with its size and time, and every WAL fsync", async () => {
    dir = await mkdtemp(join(tmpdir(), "petstore-observer-"));
    const batches: { units: number; commitMs: number }[] = [];
    const fsyncs: number[] = [];
    const client = await connectLibsql({
      url: `file:${join(dir, "observed.db")}`,
      observer: { onBatch: (batch) => batches.push(batch), onFsync: (ms) => fsyncs.push(ms) },
    });
    try {
      await migrateLibsql(client);
      const { store } = libsqlAdapters(client);
      batches.length = 0;
      // Five creates started in one turn of the event loop: one batch of one multi-row INSERT.
      await Promise.all(Array.from({ length: 5 }, (_, i) => store.createPet({ name: `p${i}`, categoryId: 1 })));
      await store.createPet({ name: "alone", categoryId: 1 });
      expect(batches.map((batch) => batch.units)).toEqual([1, 1]);
      for (const { commitMs } of batches) expect(commitMs).toBeGreaterThanOrEqual(0);
      expect(fsyncs.length).toBeGreaterThanOrEqual(2);
      for (const ms of fsyncs) expect(ms).toBeGreaterThan(0);
    } finally {
      client.close();
    }
  });
});
