import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { postgresConnection } from "./postgres-connection.js";

describe("postgresConnection", () => {
  it("keeps several hosts in the URL, for postgres.js to try in turn", () => {
    const { url, firstHost, options } = postgresConnection(
      "postgres://app:p%40ss@db1:5432,db2:5433/petstore?sslmode=require",
    );
    expect(url).toBe("postgres://app:p%40ss@db1:5432,db2:5433/petstore?sslmode=require");
    expect(new URL(firstHost)).toMatchObject({
      username: "app",
      password: "p%40ss",
      host: "db1:5432",
      pathname: "/petstore",
    });
    expect(options).toMatchObject({ target_session_attrs: undefined });
    expect(postgresConnection("postgres://app@db1:5432,db2:5433/petstore").options.ssl).toBe(false);
  });

  it("hands libpq's target_session_attrs=read-write over as primary, which postgres.js checks against a hot standby", () => {
    const { url, options } = postgresConnection(
      "postgres://db1,db2/petstore?target_session_attrs=read-write&application_name=api",
    );
    expect(url).toBe("postgres://db1,db2/petstore?application_name=api");
    expect(options.target_session_attrs).toBe("primary");
    expect(
      postgresConnection("postgres://db1,db2/petstore?target_session_attrs=prefer-standby").options
        .target_session_attrs,
    ).toBe("prefer-standby");
    expect(
      postgresConnection("postgres://db1,db2/petstore?target_session_attrs=any").options.target_session_attrs,
    ).toBeUndefined();
  });

  it("leaves TLS to the URL's sslmode, and off without it", () => {
    expect(postgresConnection("postgres://db/petstore?sslmode=verify-full").options.ssl).toBeUndefined();
    expect(postgresConnection("postgres://db/petstore").options.ssl).toBe(false);
  });

  it("reads libpq's sslrootcert: the CA to verify against, host name too unless verify-ca; never sent to the server", () => {
    const dir = mkdtempSync(join(tmpdir(), "petstore-ca-"));
    try {
      const ca = join(dir, "ca.pem");
      writeFileSync(ca, "-----BEGIN CERTIFICATE-----\n");
      const full = postgresConnection(`postgres://db/petstore?sslmode=verify-full&sslrootcert=${ca}`);
      expect(full.url).toBe("postgres://db/petstore?sslmode=verify-full");
      expect(full.options.ssl).toEqual({ ca: "-----BEGIN CERTIFICATE-----\n", rejectUnauthorized: true });
      const chainOnly = postgresConnection(`postgres://db/petstore?sslmode=verify-ca&sslrootcert=${ca}`).options
        .ssl as { checkServerIdentity?: unknown };
      expect(chainOnly.checkServerIdentity).toBeTypeOf("function");
      expect(postgresConnection("postgres://db/petstore?sslrootcert=system").options.ssl).toBe("verify-full");
      expect(() => postgresConnection(`postgres://db/petstore?sslmode=disable&sslrootcert=${ca}`)).toThrow(
        /sslrootcert needs sslmode=verify-full/,
      );
      expect(() => postgresConnection(`postgres://db/petstore?sslrootcert=${join(dir, "missing.pem")}`)).toThrow(
        /cannot read sslrootcert .*missing\.pem: ENOENT/,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
