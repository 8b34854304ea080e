/**
 * One OS process of the multi-process test: its own connection to the shared database file,
 * its own petstore. It migrates (as every server does at start), says "ready", waits for the
 * start file, then fires all its creates at once and prints what came back as one JSON line.
 */
import { existsSync } from "node:fs";
import { createClient } from "@libsql/client";
import { libsqlAdapters, migrateLibsql } from "@petstore/adapters/libsql";
import { connectLibsql } from "@petstore/adapters/libsql/connect";
import { createPetstore } from "@petstore/core";
import { waitFor } from "../_support/wait-for.js";

const { DB_URL, API_KEY, REQUESTS, START_FILE, PLAIN_CLIENT } = process.env;
if (!DB_URL || !API_KEY || !REQUESTS || !START_FILE) throw new Error("missing DB_URL, API_KEY, REQUESTS or START_FILE");

// PLAIN_CLIENT: as a remote URL gets it, a plain client without the local fast path.
const plain = PLAIN_CLIENT ? createClient({ url: DB_URL, timeout: 5_000 }) : undefined;
const db = plain ? { client: plain, close: () => plain.close() } : await connectLibsql({ url: DB_URL });
await migrateLibsql(db);
process.stdout.write("ready\n");

// Checked every 2 ms, so that the processes fire as nearly at once as they can.
await waitFor(() => existsSync(START_FILE), 30_000, { every: 2, what: "the start file" });

// The wall clock the test set (libfaketime): every process counts within the same minute window.
const petstore = createPetstore(libsqlAdapters(db));
const responses = await Promise.all(
  Array.from({ length: Number(REQUESTS) }, async (_, i) => {
    const response = await petstore.fetch(
      new Request("http://petstore.test/v1/pets", {
        method: "POST",
        headers: { Authorization: `Bearer ${API_KEY}`, "Content-Type": "application/json" },
        body: JSON.stringify({ name: `Pet ${process.pid}-${i}`, categoryId: 1 }),
      }),
      { clientAddress: "127.0.0.1" },
    );
    const body = (await response.json()) as { id?: number; code?: string };
    return { status: response.status, id: body.id, code: body.code };
  }),
);
db.close();
process.stdout.write(`${JSON.stringify({ pid: process.pid, responses })}\n`);
