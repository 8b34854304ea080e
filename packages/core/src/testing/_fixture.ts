import { afterEach, beforeEach, describe } from "vitest";

/** What a contract suite's `make` returns: the ports under test, and what releases them. */
export interface Closable {
  /** Releases what `make` opened (a connection, a temporary database). */
  close?: () => Promise<void>;
}

/**
 * A `describe` block whose tests each see a fresh fixture from `make`, closed after the test.
 * `fixture` is one object, refilled before every test, so the suite names it once.
 */
export function describeWithFixture<F extends Closable>(
  title: string,
  make: () => Promise<F>,
  suite: (fixture: F) => void,
): void {
  describe(title, () => {
    const fixture = {} as F;
    beforeEach(async () => {
      Object.assign(fixture, await make());
    });
    afterEach(async () => {
      await fixture.close?.();
      for (const key of Object.keys(fixture)) delete (fixture as Record<string, unknown>)[key];
    });
    suite(fixture);
  });
}

/** The clock of a suite whose tests move it (`clock.now = T0 + 5_000`). */
export interface MovedClock {
  now: number;
}

/**
 * `describeWithFixture` for ports on a clock the tests move: `make` is given `clock`'s reading,
 * and `clock.now` is back at `start` before each test.
 */
export function describeOnMovedClock<F extends Closable>(
  title: string,
  start: number,
  make: (clock: () => number) => Promise<F>,
  suite: (fixture: F, clock: MovedClock) => void,
): void {
  const clock = { now: start };
  describeWithFixture(
    title,
    () => {
      clock.now = start;
      return make(() => clock.now);
    },
    (fixture) => suite(fixture, clock),
  );
}
