import { execFileSync } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import NativeDatabase from "libsql";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../cli.js";
import { openStorage } from "../storage/open-storage.js";

const dir = mkdtempSync(join(tmpdir(), "petstore-backup-"));
const mounts: string[] = [];
afterAll(() => {
  for (const mount of mounts) execFileSync("umount", [mount]);
  rmSync(dir, { recursive: true, force: true });
});

async function cli(argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCli(argv, {}, { out: (line) => out.push(line), err: (line) => err.push(line) });
  return { code, out, err };
}

/** A small tmpfs at `path` (we run as root in CI); false where mounting is impossible. */
function tryMount(path: string, options: string): boolean {
  mkdirSync(path, { recursive: true });
  try {
    execFileSync("mount", ["-t", "tmpfs", "-o", options, "tmpfs", path], { stdio: "ignore" });
    mounts.unshift(path);
    return true;
  } catch {
    return false;
  }
}

const source = join(dir, "live.db");
beforeAll(async () => {
  const storage = await openStorage({ url: `file:${source}` });
  try {
    for (let i = 0; i < 5; i++) await storage.adapters.store.createPet({ name: `pet ${i}`, categoryId: 1 });
    await storage.adapters.store.createOrder({ petId: 1, quantity: 2, status: "placed", complete: false });
    await runCli(["keys", "create", "--plan", "pro", "--db", `file:${source}`], {}, { out: () => {}, err: () => {} });
  } finally {
    storage.close();
  }
});

describe("petstore backup", () => {
  it("copies the database, checks it and prints what it holds", async () => {
    const out = join(dir, "copy.db");
    const { code, out: lines, err } = await cli(["backup", "--db", `file:${source}`, "--out", out, "--json"]);
    expect(err).toEqual([]);
    expect(code).toBe(0);
    const summary = JSON.parse(lines.join("\n"));
    expect(summary).toEqual({ out, pets: 5, orders: 1, keys: 1, bytes: readFileSync(out).length, integrity: "ok" });
    const copy = new NativeDatabase(out);
    expect(copy.prepare("SELECT name FROM pets ORDER BY id").raw(true).all()).toEqual(
      [0, 1, 2, 3, 4].map((i) => [`pet ${i}`]),
    );
    copy.close();
    const text = await cli(["backup", "--db", `file:${source}`, "--out", join(dir, "copy-text.db")]);
    expect(text.out).toEqual([expect.stringMatching(/: 5 pets, 1 order, 1 API key, \d+ bytes; integrity check ok\.$/)]);
  });

  it("refuses to replace an existing file unless --force", async () => {
    const out = join(dir, "existing.db");
    writeFileSync(out, "keep me");
    const refused = await cli(["backup", "--db", `file:${source}`, "--out", out]);
    expect(refused).toEqual({ code: 1, out: [], err: [`petstore: ${out} already exists (--force replaces it)`] });
    expect(readFileSync(out, "utf8")).toBe("keep me");
    const forced = await cli(["backup", "--db", `file:${source}`, "--out", out, "--force", "--json"]);
    expect(forced.code).toBe(0);
    expect(JSON.parse(forced.out[0]!)).toMatchObject({ pets: 5 });
  });

  it.each([
    [
      "a remote server",
      "libsql://db.example.invalid",
      /^petstore: backup copies a local database file \(file:PATH\), not a remote server/,
    ],
    ["an in-memory database", ":memory:", /^petstore: backup copies a local database file \(file:PATH\), not :memory:/],
    ["a database that does not exist", `file:${join(dir, "missing.db")}`, /^petstore: no database at .*missing\.db$/],
  ])("exits 1 with one line on %s, and creates nothing", async (_, db, message) => {
    const out = join(dir, `never-${readdirSync(dir).length}.db`);
    const { code, err } = await cli(["backup", "--db", db, "--out", out]);
    expect(code).toBe(1);
    expect(err).toHaveLength(1);
    expect(err[0]).toMatch(message);
    expect(existsSync(out)).toBe(false);
    expect(existsSync(join(dir, "missing.db"))).toBe(false);
  });

  it("refuses to write over the live database or its WAL, even with --force", async () => {
    // By stat: this process never opens the database's file other than through SQLite.
    const fingerprint = () => ({
      size: statSync(source).size,
      mtime: statSync(source).mtimeMs,
      ino: statSync(source).ino,
    });
    const before = fingerprint();
    symlinkSync(source, join(dir, "link-to-live.db"));
    symlinkSync(dir, join(dir, "link-to-dir"));
    const names = [
      source,
      `${source}-wal`,
      `${source}-shm`,
      `${source}-journal`,
      join(dir, "link-to-live.db"),
      join(dir, "link-to-dir", "live.db-journal"),
    ];
    for (const out of names) {
      const { code, err } = await cli(["backup", "--db", `file:${source}`, "--out", out, "--force"]);
      expect(code).toBe(1);
      expect(err).toEqual([
        expect.stringMatching(/is the database itself \(or one of its files\): write the copy elsewhere$/),
      ]);
    }
    expect(fingerprint()).toEqual(before);
  });

  it("exits 1 when the destination's directory does not exist", async () => {
    const { code, err } = await cli(["backup", "--db", `file:${source}`, "--out", join(dir, "no-such-dir", "copy.db")]);
    expect(code).toBe(1);
    expect(err).toEqual([
      `petstore: the directory ${join(dir, "no-such-dir")} does not exist: create it first (mkdir -p ${join(dir, "no-such-dir")})`,
    ]);
  });

  it("refuses to put a copy in the place of a database in use, pointing to restore", async () => {
    const other = join(dir, "other-live.db");
    writeFileSync(other, "");
    writeFileSync(`${other}-wal`, "stale");
    const { code, err } = await cli(["backup", "--db", `file:${source}`, "--out", other, "--force"]);
    expect(code).toBe(1);
    expect(err).toEqual([
      expect.stringContaining(
        "is a database in use (it has a -wal or -shm file beside it); to put a backup in a database's place use 'petstore restore",
      ),
    ]);
    expect(readFileSync(`${other}-wal`, "utf8")).toBe("stale");
  });

  it("removes the copies a killed backup left behind, and only those", async () => {
    const out = join(dir, "tidy.db");
    // A process id that runs no process, and this process's own (a backup in progress).
    const dead = join(dir, ".tidy.db.999999999-0a0b0c0d.partial");
    const running = join(dir, `.tidy.db.${process.pid}-0a0b0c0d.partial`);
    for (const file of [dead, `${dead}-journal`, running]) writeFileSync(file, "partial");
    expect((await cli(["backup", "--db", `file:${source}`, "--out", out])).code).toBe(0);
    expect([existsSync(dead), existsSync(`${dead}-journal`), existsSync(running)]).toEqual([false, false, true]);
    rmSync(running);
  });

  it("exits 2 without --out", async () => {
    const { code, err } = await cli(["backup", "--db", `file:${source}`]);
    expect(code).toBe(2);
    expect(err[0]).toBe("petstore: --out is required: the file the copy is written to");
    expect(err[1]).toContain("Usage: petstore backup --out FILE [--db file:PATH]");
  });

  it("explains itself and the restore in backup --help", async () => {
    const { code, out } = await cli(["backup", "--help"]);
    expect(code).toBe(0);
    for (const text of ["--out FILE", "--force", "--json", "petstore restore --from FILE"])
      expect(out.join("\n")).toContain(text);
  });

  describe("on a small or read-only file system", () => {
    const readOnly = join(dir, "ro");
    const full = join(dir, "full");
    const mounted = tryMount(readOnly, "ro,size=1m") && tryMount(full, "size=256k");
    if (!mounted)
      console.warn("backup.test: skipping the full-disk and read-only cases: cannot mount a tmpfs here (needs root)");

    it.skipIf(!mounted)("exits 1 on a read-only destination and leaves no file", async () => {
      const { code, err } = await cli(["backup", "--db", `file:${source}`, "--out", join(readOnly, "copy.db")]);
      expect(code).toBe(1);
      expect(err).toEqual([expect.stringMatching(/^petstore: cannot back up to .*\/ro\/copy\.db: /)]);
      expect(readdirSync(readOnly)).toEqual([]);
    });

    it.skipIf(!mounted)(
      "exits 1 when the disk fills up, and leaves neither the copy nor its temporary file",
      async () => {
        const big = join(dir, "big.db");
        const db = new NativeDatabase(big);
        db.exec(
          "CREATE TABLE pets (id INTEGER PRIMARY KEY, name TEXT); CREATE TABLE orders (id INTEGER); CREATE TABLE api_keys (id TEXT)",
        );
        const insert = db.prepare("INSERT INTO pets (name) VALUES (?)");
        db.exec("BEGIN");
        for (let i = 0; i < 5_000; i++) insert.run([`${i} `.padEnd(100, "x")]);
        db.exec("COMMIT");
        db.close();
        const { code, err } = await cli(["backup", "--db", `file:${big}`, "--out", join(full, "copy.db")]);
        expect(code).toBe(1);
        expect(err).toEqual([
          expect.stringMatching(/^petstore: cannot back up to .*\/full\/copy\.db: the disk is full$/),
        ]);
        expect(readdirSync(full)).toEqual([]);
      },
    );
  });
});
