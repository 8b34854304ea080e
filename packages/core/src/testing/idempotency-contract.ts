import { expect, it } from "vitest";
import { describeWithFixture } from "./_fixture.js";
import { IDEMPOTENCY_LEASE_MS, IDEMPOTENCY_TTL_MS, type IdempotencyClaim } from "../ports.js";
import type { NewPet } from "../schemas.js";
import type { MakeStore } from "./pet-store-contract.js";

const T0 = Date.UTC(2030, 0, 15, 12, 0, 0);
const rex: NewPet = { name: "Rex", categoryId: 1 };
const claimOf = (overrides: Partial<IdempotencyClaim> = {}): IdempotencyClaim => ({
  scope: "key_caller1",
  key: "order-7f3a",
  fingerprint: "a".repeat(64),
  ...overrides,
});
const otherBody = { fingerprint: "b".repeat(64) };

/**
 * The `IdempotencyStore` contract, run with the store that completes its claims: one atomic
 * `claim`, completion by `createClaimedPet(pet, claim)` or without a pet by `complete`,
 * `release`, the 24 h TTL and the lease.
 * Records age by the clock `make` is given.
 * @example idempotencyContract("memory", async (clock) => memoryAdapters({ clock }));
 */
export function idempotencyContract(name: string, make: MakeStore): void {
  /** The test's clock, which each claim sets to its instant. */
  let testNow = T0;
  describeWithFixture(
    `IdempotencyStore contract: ${name}`,
    () => make(() => testNow),
    (fixture) => {
      /** A create under the claim, which must be stored. */
      const createUnder = async (c: IdempotencyClaim) => {
        const done = await fixture.store.createClaimedPet(rex, c);
        if (done.state !== "created") throw new Error(`the create under the claim answered ${done.state}`);
        return done.pet;
      };

      const claim = (c: IdempotencyClaim, now: number) => {
        testNow = now;
        return fixture.idempotency.claim(c);
      };

      /** The first request's claim, then another body's request taking the key over after the lease. */
      const takenOverAfterLease = async () => {
        await claim(claimOf(), T0);
        expect(await claim(claimOf(otherBody), T0 + IDEMPOTENCY_LEASE_MS + 1)).toEqual({ state: "claimed" });
      };

      it("grants the first claim of a key", async () => {
        expect(await claim(claimOf(), T0)).toEqual({ state: "claimed" });
      });

      it("answers in_progress to the same key and body while the first claim is unfinished", async () => {
        await claim(claimOf(), T0);
        expect(await claim(claimOf(), T0 + 1_000)).toEqual({ state: "in_progress" });
      });

      it("answers mismatch to the same key with a different body while the first claim is unfinished", async () => {
        await claim(claimOf(), T0);
        expect(await claim(claimOf(otherBody), T0 + 1_000)).toEqual({ state: "mismatch" });
      });

      it("answers completed with the pet id once createPet committed under the claim", async () => {
        await claim(claimOf(), T0);
        const pet = await createUnder(claimOf());
        expect(await fixture.store.getPet(pet.id)).toEqual(pet);
        expect(await claim(claimOf(), T0 + 2_000)).toEqual({ state: "completed", petId: pet.id });
      });

      it("answers mismatch to a different body after the claim completed", async () => {
        await claim(claimOf(), T0);
        await createUnder(claimOf());
        expect(await claim(claimOf(otherBody), T0 + 2_000)).toEqual({ state: "mismatch" });
      });

      it("completes only the claim the pet was created under", async () => {
        const other = claimOf({ key: "order-other" });
        await claim(claimOf(), T0);
        await claim(other, T0);
        const pet = await createUnder(claimOf());
        expect(await claim(claimOf(), T0 + 1)).toEqual({ state: "completed", petId: pet.id });
        expect(await claim(other, T0 + 1)).toEqual({ state: "in_progress" });
      });

      it("keeps the keys of different scopes apart", async () => {
        await claim(claimOf(), T0);
        await createUnder(claimOf());
        expect(await claim(claimOf({ scope: "key_caller2" }), T0 + 1)).toEqual({ state: "claimed" });
        expect(await claim(claimOf({ scope: "key_caller2", ...otherBody }), T0 + 2)).toEqual({ state: "mismatch" });
      });

      it("lets a retry claim the key again after release", async () => {
        await claim(claimOf(), T0);
        await fixture.idempotency.release(claimOf());
        expect(await claim(claimOf(otherBody), T0 + 1_000)).toEqual({ state: "claimed" });
      });

      it("keeps a completed record when it is released, so a committed pet is never created twice", async () => {
        await claim(claimOf(), T0);
        const pet = await createUnder(claimOf());
        await fixture.idempotency.release(claimOf());
        expect(await claim(claimOf(), T0 + 1_000)).toEqual({ state: "completed", petId: pet.id });
      });

      it("answers done, until the TTL, to a claim completed without a pet, and mismatch to another body", async () => {
        await claim(claimOf(), T0);
        await fixture.idempotency.complete(claimOf());
        expect(await claim(claimOf(), T0 + 1_000)).toEqual({ state: "done" });
        expect(await claim(claimOf(otherBody), T0 + 1_000)).toEqual({ state: "mismatch" });
        expect(await claim(claimOf(), T0 + IDEMPOTENCY_LEASE_MS + 1)).toEqual({ state: "done" });
        expect(await claim(claimOf(), T0 + IDEMPOTENCY_TTL_MS + 1)).toEqual({ state: "claimed" });
      });

      it("keeps a record completed without a pet when it is released", async () => {
        await claim(claimOf(), T0);
        await fixture.idempotency.complete(claimOf());
        await fixture.idempotency.release(claimOf());
        expect(await claim(claimOf(), T0 + 1_000)).toEqual({ state: "done" });
      });

      it("completes only an unfinished claim with its own body: not one another request took over after the lease", async () => {
        await takenOverAfterLease();
        await fixture.idempotency.complete(claimOf());
        expect(await claim(claimOf(otherBody), T0 + IDEMPOTENCY_LEASE_MS + 2)).toEqual({ state: "in_progress" });
      });

      it("does nothing when releasing a claim that does not exist", async () => {
        await expect(fixture.idempotency.release(claimOf())).resolves.toBeUndefined();
        expect(await claim(claimOf(), T0)).toEqual({ state: "claimed" });
      });

      it("keeps a completed record until IDEMPOTENCY_TTL_MS after the claim", async () => {
        await claim(claimOf(), T0);
        const pet = await createUnder(claimOf());
        expect(await claim(claimOf(), T0 + IDEMPOTENCY_TTL_MS - 1)).toEqual({ state: "completed", petId: pet.id });
        expect(await claim(claimOf(otherBody), T0 + IDEMPOTENCY_TTL_MS - 1)).toEqual({ state: "mismatch" });
      });

      it("treats a completed record older than IDEMPOTENCY_TTL_MS as absent, whatever the body", async () => {
        await claim(claimOf(), T0);
        await createUnder(claimOf());
        const later = T0 + IDEMPOTENCY_TTL_MS + 1;
        expect(await claim(claimOf(otherBody), later)).toEqual({ state: "claimed" });
        const pet = await createUnder(claimOf(otherBody));
        expect(await claim(claimOf(otherBody), later + 1)).toEqual({ state: "completed", petId: pet.id });
      });

      it("keeps a completed record past the lease: the lease only ends unfinished claims", async () => {
        await claim(claimOf(), T0);
        const pet = await createUnder(claimOf());
        expect(await claim(claimOf(), T0 + IDEMPOTENCY_LEASE_MS + 1)).toEqual({ state: "completed", petId: pet.id });
      });

      it("holds an unfinished claim until IDEMPOTENCY_LEASE_MS, then lets another claim take it", async () => {
        await claim(claimOf(), T0);
        expect(await claim(claimOf(), T0 + IDEMPOTENCY_LEASE_MS - 1)).toEqual({ state: "in_progress" });
        expect(await claim(claimOf(otherBody), T0 + IDEMPOTENCY_LEASE_MS + 1)).toEqual({ state: "claimed" });
        expect(await claim(claimOf(), T0 + IDEMPOTENCY_LEASE_MS + 2)).toEqual({ state: "mismatch" });
      });

      it("refuses a create under a claim another request took over after the lease, writing nothing", async () => {
        await takenOverAfterLease();
        // The first request wakes up after its lease ended: its create must not land.
        expect(await fixture.store.createClaimedPet(rex, claimOf())).toEqual({ state: "claim_lost" });
        expect(await fixture.store.listPets({ limit: 10 })).toEqual([]);
        const pet = await createUnder(claimOf(otherBody));
        expect(await claim(claimOf(otherBody), T0 + IDEMPOTENCY_LEASE_MS + 2)).toEqual({
          state: "completed",
          petId: pet.id,
        });
      });

      it("does not let a stale request release the claim that took over its key", async () => {
        await takenOverAfterLease();
        await fixture.idempotency.release(claimOf());
        expect(await claim(claimOf(otherBody), T0 + IDEMPOTENCY_LEASE_MS + 2)).toEqual({ state: "in_progress" });
      });

      it("grants exactly one of many concurrent claims of one key", async () => {
        const results = await Promise.all(Array.from({ length: 12 }, () => claim(claimOf(), T0)));
        expect(results.filter((r) => r.state === "claimed")).toHaveLength(1);
        expect(results.filter((r) => r.state === "in_progress")).toHaveLength(11);
      });

      it("grants exactly one of many concurrent claims of one key with different bodies", async () => {
        const results = await Promise.all(
          Array.from({ length: 12 }, (_, i) => claim(claimOf({ fingerprint: i.toString(16).padStart(64, "0") }), T0)),
        );
        expect(results.filter((r) => r.state === "claimed")).toHaveLength(1);
        expect(results.filter((r) => r.state === "mismatch")).toHaveLength(11);
      });

      it("grants concurrent claims of different keys independently", async () => {
        const results = await Promise.all(
          Array.from({ length: 12 }, (_, i) => claim(claimOf({ key: `order-${i}` }), T0)),
        );
        expect(results.every((r) => r.state === "claimed")).toBe(true);
      });
    },
  );

  describeWithFixture(
    `IdempotencyStore contract: ${name}, on its store's own clock`,
    () => make(undefined),
    (fixture) => {
      it("keeps a record by the store's clock: a claim made now is in progress, then completed", async () => {
        expect(await fixture.idempotency.claim(claimOf())).toEqual({ state: "claimed" });
        expect(await fixture.idempotency.claim(claimOf())).toEqual({ state: "in_progress" });
        const created = await fixture.store.createClaimedPet(rex, claimOf());
        expect(created).toMatchObject({ state: "created" });
        expect(await fixture.idempotency.claim(claimOf())).toEqual({
          state: "completed",
          petId: (created as { pet: { id: number } }).pet.id,
        });
      });
    },
  );
}
