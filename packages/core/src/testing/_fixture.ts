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
