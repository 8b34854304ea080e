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
  /** Moves the wall clock to `offsetSeconds` from the real one (to the millisecond): at once, for every process. */
  stepTo(offsetSeconds: number): void;
  /** The wall clock's reading now, Unix ms (this process's real clock, which the faked processes share, plus the offset). */
  now(): number;
  /** Moves the wall clock forward to read `instant` (Unix ms) now; throws rather than step it back. */
  stepForwardTo(instant: number): void;
  /** Removes the file. */
  remove(): void;
}

/**
 * A wall clock that steps (libfaketime with a timestamp file, `FAKETIME_NO_CACHE=1` so that a
 * new offset takes effect at the next reading, `FAKETIME_DONT_FAKE_MONOTONIC=1`): what NTP
 * correcting a clock does to a process, which sees `Date.now()` jump and `performance.now()`
 * run on. The file is readable by every user (a PostgreSQL server runs as `postgres`).
 * `startAt` (Unix ms): the instant the clock reads at once, so that a process started with
 * `env` starts there (the real time by default).
 */
export function steppedWallClock(startAt?: number): SteppedWallClock {
  const dir = mkdtempSync(join(tmpdir(), "petstore-faketime-"));
  chmodSync(dir, 0o755);
  const file = join(dir, "offset");
  let offset = startAt === undefined ? 0 : (startAt - Date.now()) / 1000;
  const write = () => {
    // Milliseconds: libfaketime reads a fractional offset.
    writeFileSync(`${file}.next`, `${offset >= 0 ? "+" : ""}${offset.toFixed(3)}\n`, { mode: 0o644 });
    // Renamed into place: a reader never sees a half-written offset.
    renameSync(`${file}.next`, file);
  };
  write();
  const stepTo = (offsetSeconds: number) => {
    if (!Number.isFinite(offsetSeconds)) throw new TypeError(`a number of seconds, not ${offsetSeconds}`);
    offset = offsetSeconds;
    write();
  };
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
    stepTo,
    now: () => Date.now() + offset * 1000,
    stepForwardTo(instant) {
      const step = instant - (Date.now() + offset * 1000);
      if (step < 0) throw new Error(`the wall clock is already ${-step} ms past ${new Date(instant).toISOString()}`);
      stepTo(offset + step / 1000);
    },
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}
