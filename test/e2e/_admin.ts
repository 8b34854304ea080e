import { libsqlAdminTokens, migrateLibsql } from "@petstore/adapters/libsql";
import { connectLibsql } from "@petstore/adapters/libsql/connect";
import { migratePostgres, postgresAdminTokens } from "@petstore/adapters/postgres";
import { issueAdminToken } from "@petstore/core";
import postgres from "postgres";

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
