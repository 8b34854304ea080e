import { existsSync, readdirSync } from "node:fs";

/**
 * Where Debian's libfaketime is (scripts/test-tools.sh installs `faketime`): a process started
 * with it in `LD_PRELOAD` lives at the time `FAKETIME` says (shifted, or sped up).
 */
export function libfaketime(): string {
  for (const path of readdirSync("/usr/lib").map((name) => `/usr/lib/${name}/faketime/libfaketime.so.1`))
    if (existsSync(path)) return path;
  throw new Error("libfaketime not found: run scripts/test-tools.sh");
}
