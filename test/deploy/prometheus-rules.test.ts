import { spawnSync } from "node:child_process";
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT } from "../e2e/_binary.js";

const DIR = join(ROOT, "deploy/prometheus");
const promtool = (args: string[]) => spawnSync("promtool", args, { cwd: DIR, encoding: "utf8", timeout: 30_000 });

describe("deploy/prometheus", () => {
  it("has alerting rules that promtool accepts and that pass their unit tests", () => {
    const checked = promtool(["check", "rules", "petstore-alerts.yml"]);
    expect(checked.error).toBeUndefined();
    expect(checked.stdout).toContain("SUCCESS: 7 rules found");
    expect(checked.status).toBe(0);
    const tested = promtool(["test", "rules", "petstore-alerts.test.yml"]);
    expect({ status: tested.status, output: tested.stdout + tested.stderr }).toEqual({
      status: 0,
      output: expect.stringContaining("SUCCESS"),
    });
  });

  it("has an example configuration that loads the rules", () => {
    const checked = promtool(["check", "config", "prometheus.example.yml"]);
    expect({ status: checked.status, output: checked.stdout + checked.stderr }).toEqual({
      status: 0,
      output: expect.stringContaining("SUCCESS: 7 rules found"),
    });
  });

  it("fails the rules' unit tests when an alert's threshold is changed: they can fail", () => {
    const dir = mkdtempSync(join(tmpdir(), "petstore-rules-"));
    try {
      const rules = readFileSync(join(DIR, "petstore-alerts.yml"), "utf8");
      const broken = rules.replace("[10m])) > 10\n", "[10m])) > 100\n");
      expect(broken).not.toBe(rules);
      writeFileSync(join(dir, "petstore-alerts.yml"), broken);
      copyFileSync(join(DIR, "petstore-alerts.test.yml"), join(dir, "petstore-alerts.test.yml"));
      const tested = spawnSync("promtool", ["test", "rules", "petstore-alerts.test.yml"], {
        cwd: dir,
        encoding: "utf8",
        timeout: 30_000,
      });
      expect(tested.status).toBe(1);
      expect(tested.stdout + tested.stderr).toContain("alertname: PetstoreBanSpike");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
