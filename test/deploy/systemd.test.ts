import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { adminListening } from "../e2e/_admin.js";
import { ensureBinary, ROOT } from "../e2e/_binary.js";
import { binaryServe, cleanUp, startServer, stopProcess, tempDatabaseUrl } from "../e2e/_processes.js";

const UNITS = join(ROOT, "deploy/systemd");
const INSTALLED = "/usr/local/bin/petstore";
const available = spawnSync("systemd-analyze", ["--version"]).status === 0;
if (!available) console.warn("systemd.test: skipped: systemd-analyze is not installed (Debian package systemd)");

const dir = mkdtempSync(join(tmpdir(), "petstore-units-"));
afterAll(async () => {
  rmSync(dir, { recursive: true, force: true });
  await cleanUp();
});

/**
 * The units as shipped, but with the binary's installed path pointing at the binary just
 * built: `verify` refuses an ExecStart whose program does not exist, and this machine has no
 * /usr/local/bin/petstore. Nothing else is changed.
 */
function stage(files: Record<string, string>): string[] {
  for (const [name, text] of Object.entries(files))
    writeFileSync(join(dir, name), text.replaceAll(INSTALLED, join(dir, "petstore")));
  return Object.keys(files).map((name) => join(dir, name));
}

function verify(paths: string[]) {
  const result = spawnSync("systemd-analyze", ["verify", "--man=no", ...paths], {
    cwd: dir,
    encoding: "utf8",
    timeout: 30_000,
  });
  return { status: result.status, output: (result.stdout + result.stderr).trim() };
}

const shipped = () =>
  Object.fromEntries(readdirSync(UNITS).map((name) => [name, readFileSync(join(UNITS, name), "utf8")]));

describe.skipIf(!available)("deploy/systemd", () => {
  beforeAll(() => symlinkSync(ensureBinary(), join(dir, "petstore")), 120_000);

  it("ships the server unit and a nightly backup service and timer, all run from /usr/local/bin/petstore", () => {
    const units = shipped();
    expect(Object.keys(units).sort()).toEqual(["petstore-backup.service", "petstore-backup.timer", "petstore.service"]);
    expect(units["petstore.service"]).toContain(`ExecStart=${INSTALLED} serve`);
    expect(units["petstore-backup.service"]).toContain(
      `exec ${INSTALLED} backup --db file:/var/lib/petstore/petstore.db`,
    );
    expect(units["petstore-backup.timer"]).toMatch(/^OnCalendar=/m);
  });

  it("serves the console on loopback only, apart from the API's port, as docs/vm.md's tunnel reaches it", async () => {
    const execStart = /^ExecStart=(\S+) serve (.*)$/m.exec(shipped()["petstore.service"]!)!;
    expect(execStart[2]).toContain("--admin-listen 127.0.0.1:9465");
    expect(execStart[2]).not.toContain("--admin-listen-public");
    // The unit's flags as the binary reads them: an admin listener the server accepts and starts.
    const flags = execStart[2]!.replace("127.0.0.1:9464", "127.0.0.1:0").replace("127.0.0.1:9465", "127.0.0.1:0");
    const server = await startServer([...binaryServe(tempDatabaseUrl()), ...flags.split(" ")]);
    try {
      expect(adminListening(server).host).toBe("127.0.0.1");
    } finally {
      await stopProcess(server.child, "SIGTERM");
    }
  }, 60_000);

  it("passes systemd-analyze verify without a single warning", () => {
    expect(verify(stage(shipped()))).toEqual({ status: 0, output: "" });
  });

  it("reports a mistyped setting, so the check above can fail", () => {
    const units = shipped();
    const typo = units["petstore.service"]!.replace("Restart=on-failure", "Restart=on-failure\nRestartt=always");
    const { output } = verify(stage({ "petstore.service": typo }));
    expect(output).toContain("Unknown key 'Restartt'");
  });
});
