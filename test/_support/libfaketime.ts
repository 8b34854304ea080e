import { chmodSync, existsSync, mkdtempSync, readdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/**
 * Where Debian's libfaketime is (scripts/test-tools.sh installs `faketime`): a process started
 * with it in `LD_PRELOAD` lives at the time `FAKETIME` says (shifted, or sped up).
 */
export function libfaketime(): string {
  for (const path of readdirSync("/usr/lib").map((name) => `/usr/lib/${name}/faketime/libfaketime.so.1`))
    if (existsSync(path)) return path;
  throw new Error("libfaketime not found: run scripts/test-tools.sh");
}

/** A wall clock a test steps as NTP does, for the processes started with its `env`. */
export interface SteppedWallClock {
  /** `LD_PRELOAD` and libfaketime's settings: the wall clock from the file, read again at every reading; the monotonic clock untouched. */
  readonly env: Record<string, string>;
  /** How far the wall clock is from the real one now, seconds. */
  readonly offset: number;
  /** Moves the wall clock to `offsetSeconds` from the real one (a whole number): at once, for every process. */
  stepTo(offsetSeconds: number): void;
  /** Removes the file. */
  remove(): void;
}

/**
 * A wall clock that steps (libfaketime with a timestamp file, `FAKETIME_NO_CACHE=1` so that a
 * new offset takes effect at the next reading, `FAKETIME_DONT_FAKE_MONOTONIC=1`): what NTP
 * correcting a clock does to a process, which sees `Date.now()` jump and `performance.now()`
 * run on. The file is readable by every user (a PostgreSQL server runs as `postgres`).
 */
export function steppedWallClock(): SteppedWallClock {
  const dir = mkdtempSync(join(tmpdir(), "petstore-faketime-"));
  chmodSync(dir, 0o755);
  const file = join(dir, "offset");
  let offset = 0;
  const write = () => {
    writeFileSync(`${file}.next`, `${offset >= 0 ? "+" : ""}${offset}\n`, { mode: 0o644 });
    // Renamed into place: a reader never sees a half-written offset.
    renameSync(`${file}.next`, file);
  };
  write();
  return {
    env: {
      LD_PRELOAD: libfaketime(),
      FAKETIME_TIMESTAMP_FILE: file,
      FAKETIME_NO_CACHE: "1",
      FAKETIME_DONT_FAKE_MONOTONIC: "1",
    },
    get offset() {
      return offset;
    },
    stepTo(offsetSeconds) {
      if (!Number.isInteger(offsetSeconds)) throw new TypeError(`a whole number of seconds, not ${offsetSeconds}`);
      offset = offsetSeconds;
      write();
    },
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}
