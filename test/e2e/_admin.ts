import { libsqlAdminTokens, migrateLibsql } from "@petstore/adapters/libsql";
import { connectLibsql } from "@petstore/adapters/libsql/connect";
import { migratePostgres, postgresAdminTokens } from "@petstore/adapters/postgres";
import { issueAdminToken } from "@petstore/core";
import postgres from "postgres";
import type { Server } from "./_processes.js";

/** A new admin token stored in the database at `db` (a file: URL or a postgres:// URL), as `petstore admin-tokens create` stores one. */
export async function adminToken(db: string): Promise<string> {
  if (db.startsWith("postgres")) {
    const sql = postgres(db, { max: 1, onnotice: () => {} });
    try {
      await migratePostgres({ sql });
      return (await issueAdminToken(postgresAdminTokens({ sql }), { label: "test" })).token;
    } finally {
      await sql.end();
    }
  }
  const connection = await connectLibsql({ url: db });
  try {
    await migrateLibsql(connection);
    return (await issueAdminToken(libsqlAdminTokens(connection), { label: "test" })).token;
  } finally {
    connection.close();
  }
}

/** What a server started with `--admin-listen` logged of its admin listener: its `admin listening` line. */
export function adminListening(server: Server): { url: string; host: string; port: number } {
  const line = server.stdout
    .map((each) => JSON.parse(each) as { event?: string; url: string; host: string; port: number })
    .find((entry) => entry.event === "admin listening");
  if (!line) throw new Error(`no admin listener in the server's log:\n${server.stdout.join("\n")}`);
  return line;
}
