import type { NewOrder, NewPet, Order, OrderStatus, Pet, PetStatus } from "./schemas.js";

/**
 * The interfaces an adapter implements. `undefined` means "absent"; a throw means the backing
 * store failed (throw `StorageUnavailableError` for busy/unreachable, which becomes a 503).
 * Times are Unix milliseconds. Every instant several servers share (a window, a ban, an
 * idempotency record's expiry, a sweep) is decided by the clock of the store that holds the
 * state, never by the caller's: a store shared by a fleet (a database, Redis, a Durable Object)
 * reads its own clock where it decides, so one server whose clock is off changes nothing for
 * the others. A store inside one process (memory) uses that process's clock. Adapters take a
 * `clock` option that replaces the store's, for tests that move time without sleeping.
 */

/**
 * The four ports an adapter package makes, together: what `createPetstore` needs of storage,
 * spread into its options.
 * @example const adapters: Adapters = libsqlAdapters(db);
 */
export interface Adapters {
  store: PetStore;
  keys: ApiKeys;
  limiter: RateLimiter;
  idempotency: IdempotencyStore;
}

/** One page request: rows with `id > afterId`, ordered by id, at most `limit` of them. */
export interface PageQuery<S extends string> {
  limit: number;
  afterId?: number;
  status?: S;
}

/** The claim on an Idempotency-Key that a create is made under (see `PetStore.createClaimedPet`). */
export interface IdempotencyClaim {
  /** Whose key space: the API key id. */
  scope: string;
  key: string;
  /** SHA-256 of the request body; a different body under the same key is a misuse. */
  fingerprint: string;
}

/**
 * Pets and orders. Ids are assigned by the store: unique, increasing, never reused. Pets may
 * come back frozen; callers copy rather than change them.
 */
export interface PetStore {
  listPets(query: PageQuery<PetStatus>): Promise<Pet[]>;
  /**
   * Optional: a number that changes whenever any pet is created, changed or deleted, by
   * whoever shares the store (other processes too). With it core keeps pages of pets while
   * the number stays put, so the list every client polls costs this read
   * instead of a page.
   */
  petsVersion?(): Promise<number>;
  getPet(id: number): Promise<Pet | undefined>;
  createPet(pet: NewPet): Promise<Pet>;
  /**
   * A create under an idempotency claim: the store marks the claim done with the new pet's id
   * in the same atomic write as the insert, so a crash can never leave a pet without its record
   * (a retry would then create a second pet) or a record without its pet. When the claim is no
   * longer held (another request took it over after the lease) it writes nothing and says so.
   */
  createClaimedPet(pet: NewPet, claim: IdempotencyClaim): Promise<ClaimedCreate>;
  listOrders(query: PageQuery<OrderStatus>): Promise<Order[]>;
  createOrder(order: NewOrder): Promise<Order>;
}

/** How long an idempotency record is kept: a key may be reused with another body after this. */
export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;

/**
 * An unfinished claim older than this was abandoned (its process died before committing) and
 * may be claimed again; without it the key would answer 409 for a whole day.
 */
export const IDEMPOTENCY_LEASE_MS = 60 * 1000;

/** What a create under a claim did: stored the pet, or nothing, the claim being no longer this request's. */
export type ClaimedCreate = { state: "created"; pet: Pet } | { state: "claim_lost" };

/**
 * What an idempotency claim found: `completed` by a pet's create (with its id), `done` by an
 * operation that stores no pet (see `IdempotencyStore.complete`).
 */
export type ClaimResult =
  | { state: "claimed" }
  | { state: "in_progress" }
  | { state: "mismatch" }
  | { state: "completed"; petId: number }
  | { state: "done" };

/**
 * Idempotency records, scoped by API key. `claim` is atomic: of two concurrent claims of one
 * key exactly one gets `claimed`. The store completes a claim (see `IdempotencyClaim`);
 * `release` drops a claim whose operation failed so that a retry can run. Records older than
 * `IDEMPOTENCY_TTL_MS`, and unfinished claims older than `IDEMPOTENCY_LEASE_MS`, count as absent:
 * ages by the store's clock, as every sweep of old records.
 */
export interface IdempotencyStore {
  claim(claim: IdempotencyClaim): Promise<ClaimResult>;
  release(claim: IdempotencyClaim): Promise<void>;
  /**
   * Completes this request's claim when its operation stores no pet (an operator's change to
   * a key, see `keyLife`), once the operation succeeded: a later claim with its fingerprint
   * answers `done`, with another `mismatch`, until the TTL. Only the claim's unfinished record
   * with its fingerprint is completed (not one another request took over after the lease).
   */
  complete(claim: IdempotencyClaim): Promise<void>;
}

/** One fixed window of a rate limit, aligned to the Unix epoch (so to UTC minutes and days). */
export interface WindowSpec {
  name: string;
  limit: number;
  seconds: number;
}

export interface BanPolicy {
  /** A bucket refused more than this many times within one window of `windows[0]` is banned. */
  threshold: number;
  seconds: number;
}

/** A bucket's two windows: the minute's, then the day's (the ban counts refusals within the first). */
export type WindowPair = readonly [WindowSpec, WindowSpec];

/**
 * A bucket and its two windows. A name may begin with a group in braces, `{acct_1}key:k_2`
 * (Redis Cluster's hash tag): the buckets of one hit share their group, so a store that
 * spreads buckets over nodes or objects keeps them in one (see `HitInput.shared`).
 */
export interface BucketWindows {
  bucket: string;
  windows: WindowPair;
}

/**
 * One request's hit on a bucket (the caller's: refusals count toward its ban, and the ban is
 * its own) and on the buckets it shares with others (an account's, across its keys). The
 * limiter decides it at its store's instant.
 */
export interface HitInput extends BucketWindows {
  ban: BanPolicy;
  /**
   * Buckets the request also counts against, in the group of `bucket`: it is admitted only
   * if every window of every bucket admits it, and then counts in all of them, in one atomic
   * step. A refusal consumes nothing in any of them; it counts toward the ban of `bucket`
   * alone, and a shared bucket is never banned.
   */
  shared?: readonly BucketWindows[];
}

/** The group of a bucket's name (`{acct_1}key:k_2` -> `acct_1`), if it has one: where a sharded store keeps it. */
export function bucketGroup(bucket: string): string | undefined {
  if (!bucket.startsWith("{")) return undefined;
  const end = bucket.indexOf("}");
  return end > 1 ? bucket.slice(1, end) : undefined;
}

export interface WindowState {
  name: string;
  limit: number;
  /** Left after this request, never negative. */
  remaining: number;
  /** Unix ms at which this window resets. */
  resetAt: number;
  /** This window refused the request. */
  exceeded: boolean;
}

/** One decision over both windows of a bucket, and of the buckets it shares. */
export interface Decision {
  allowed: boolean;
  /** One per window of the hit's bucket, in its order. */
  windows: WindowState[];
  /**
   * With `HitInput.shared`: each shared bucket's windows, in its order (`exceeded`: that
   * window refused the request).
   */
  shared?: WindowState[][];
  /** Set while the bucket is banned; the request was refused for that reason. */
  bannedUntil?: number;
  /** This refusal began the ban: the one past the threshold. Once per ban, whoever answers it. */
  banStarted?: true;
  /**
   * The instant the limiter decided at, by its store's clock: windows and the ban were placed
   * at it, and `Retry-After` counts from it, so every server answers the same for a bucket.
   */
  now: number;
}

/** What a bucket holds at the limiter's instant, counting nothing: for an operator's views. */
export interface BucketState {
  /** Each window as `hit` would report it before counting: `remaining` left now, `exceeded` false. */
  windows: WindowState[];
  /** Set while the bucket is banned. */
  bannedUntil?: number;
  /** The limiter's instant, by its store's clock. */
  now: number;
}

/**
 * How far a clock may move back and still be read as the same clock, ms. A store's instant
 * this little before a bucket's last decision is a statement that began before the one that
 * committed first (PostgreSQL stamps a statement when it arrives, not when it takes the row):
 * the bucket is decided at its last instant. Further back, the store's clock stepped back
 * (see `RateLimiter`); a server logs a step of its store's clock past this either way.
 */
export const CLOCK_STEP_MS = 1_000;

/**
 * Decides a request in one atomic step, at its store's instant: admitted requests count
 * against every window; a refusal consumes nothing but counts toward the ban; requests during
 * a ban change nothing. A bucket keeps the instant of its last decision: a hit is decided no
 * earlier than it (within `CLOCK_STEP_MS`), and a store's instant more than `CLOCK_STEP_MS`
 * before it means the store's clock stepped back, after which the bucket starts over, as new:
 * its windows restart at the current ones, its refusals and its ban are forgotten. Only that
 * keeps every promise a step back would break, with no clock but the stepped one: a window
 * or a ban never lasts longer than its length, a client under its limits is never refused,
 * and `Reset` and `Retry-After` never reach further ahead than a window's or a ban's length.
 * The price is at most one more of each window's worth per step, as a step forward admits.
 */
export interface RateLimiter {
  hit(input: HitInput): Promise<Decision>;
  /** Optional (an operator's view of a key's usage): the bucket as a hit now would find it, counting nothing. */
  peek?(input: HitInput): Promise<BucketState>;
  /**
   * Optional (an operator lifts a ban): ends the bucket's ban and forgets its refusals, so
   * its next request is decided by its windows alone. False when it was not banned.
   */
  unban?(bucket: string): Promise<boolean>;
}

export type PlanName = "free" | "pro" | "business" | "enterprise";

/** What a key may do: `pets:read` (listPets, getPet), `pets:write` (createPet), `orders:read` (the store orders). */
export type Scope = "pets:read" | "pets:write" | "orders:read";

/** An account's plan and limits: what its keys' requests count against together. */
export interface AccountLimits {
  plan: PlanName;
  /** Its own per-minute limit (an Enterprise's agreed number); absent, its plan's. */
  perMinute?: number;
  perDay?: number;
}

/**
 * What an account asks of its keys' requests: its plan and limits, and the CIDR ranges (IPv4,
 * IPv6) they must come from, as they were given, when it is not everywhere (absent, any address).
 */
export interface AccountRules extends AccountLimits {
  allowFrom?: string[];
}

/** An account (a customer): a name, a plan or its own limits, its ranges, and keys. Times by the store's clock. */
export interface AccountRecord extends AccountRules {
  /** `acct_` and 16 base62 characters (an account made for a key: `acct_` and its key id's). */
  id: string;
  name: string;
  createdAt: number;
}

/** An account to store: its `createdAt` is the store's instant of the insert unless given. */
export type NewAccountRecord = Omit<AccountRecord, "createdAt"> & { createdAt?: number };

/** The changes `ApiKeys.updateAccount` makes; `null` removes a limit (the plan's again) or the ranges. */
export interface AccountChanges {
  name?: string;
  plan?: PlanName;
  perMinute?: number | null;
  perDay?: number | null;
  /** `null`: from any address again. */
  allowFrom?: string[] | null;
}

/** An API key as stored: never the key itself, only its SHA-256. Times by the store's clock. */
export interface ApiKeyRecord {
  id: string;
  /** Lowercase hex SHA-256 of the full key (its current secret). */
  hash: string;
  /**
   * The plan and limits of the key's own bucket (its account's count beside them): its
   * account's, read with it, unless it carries caps of its own (`ownLimits`).
   */
  plan: PlanName;
  perMinute?: number;
  perDay?: number;
  /** The account the key belongs to. */
  accountId: string;
  /**
   * Set when the key carries caps of its own (its `plan`, `perMinute`, `perDay`, set for it and
   * kept through any change of its account); absent, the key follows its account's.
   */
  ownLimits?: true;
  /**
   * Its account's plan, limits and ranges, read with the key by `findByHash` (one read for
   * both, so a key's lookup stays one read); other reads may leave it out.
   */
  account?: AccountRules;
  label?: string;
  createdAt: number;
  revokedAt?: number;
  /** From this instant on the key is refused (`The API key has expired`). */
  expiresAt?: number;
  /** The last roll: the secret before it (`previousHash`) is accepted until `until`; `at` is when it was made. */
  rolled?: { previousHash: string; at: number; until: number };
  /** What the key may do, when it is not everything: absent, every scope. */
  scopes?: Scope[];
  /**
   * The CIDR ranges (IPv4, IPv6) its requests must come from, as they were given, when it is
   * not everywhere: absent, any address. Read with the key, so a lookup stays one read.
   */
  allowFrom?: string[];
  /**
   * The latest request the key was identified on (admitted or refused by its limits), by the
   * limiter's clock: written with its usage counts (see `KeyUsage.addUsage`), so a little late.
   */
  lastUsedAt?: number;
}

/**
 * A key to store: its `createdAt` is the store's instant of the insert unless given (a key
 * copied from elsewhere). Without `accountId` (or with its own, `ownAccountId(id)`) it belongs
 * to an account of its own, made in the same write, unless there, with its plan and limits,
 * named after its label or id. Without `ownLimits` it follows its account (into an account
 * that exists, its `plan` and limits are the account's, whatever it gives).
 */
export type NewApiKeyRecord = Omit<ApiKeyRecord, "createdAt" | "accountId" | "account"> & {
  createdAt?: number;
  accountId?: string;
};

/**
 * What an insert did: stored the key (the record as stored, its `createdAt` set), or nothing,
 * a key having its id or its secret already (a retry of an insert that happened).
 */
export type KeyInsert = { state: "inserted"; record: ApiKeyRecord } | { state: "duplicate" } | { state: "no_account" };

/** What an account's insert did: stored it (as stored), or nothing, an account having its id already. */
export type AccountInsert = { state: "inserted"; record: AccountRecord } | { state: "duplicate" };

/** What a change to an account found: `changed` (with the record after it), or no account by that id. */
export type AccountChange = { state: "changed"; record: AccountRecord } | { state: "missing" };

/** Who made a change, as the audit trail keeps it. */
export interface Actor {
  /** A credential or a user, never a secret: `admin:<token id>`, `cli:<user>@<host>`, or the host application's name for its user. */
  who: string;
  /** Where the change came from: the client's address, when it came over a network. */
  from?: string;
}

/**
 * A change as the audit trail keeps it beside the change: who made it, and what it set
 * (`details`, as core's key life writes them: every field set or changed, instants as
 * ISO 8601, never key material). The store writes both as given.
 */
export interface AuditNote {
  actor: Actor;
  details?: Record<string, unknown>;
}

/** The changes `ApiKeys.update` makes; `null` removes an optional field. The key's secret stays. */
export interface KeyChanges {
  /**
   * A key's plan and limits (`null`: the plan's). On a key that follows the account made for it
   * (`ownAccountId`), they change that account. Otherwise they become the key's own caps, over
   * the ones it has; a key that followed its account starts from the account's plan and limits,
   * or, given a `plan`, from that plan's.
   */
  plan?: PlanName;
  perMinute?: number | null;
  perDay?: number | null;
  /** The key follows its account again: its own caps are dropped (with no plan or limits given). */
  followAccount?: true;
  label?: string | null;
  expiresAt?: number | null;
  /** `null`: every scope again. */
  scopes?: Scope[] | null;
  /** `null`: from any address again. */
  allowFrom?: string[] | null;
}

/**
 * What a change to a key found: `changed` (with the record after it), no key by that id, a
 * revoked key (which takes no change but a revocation), or, for a roll, a key whose previous
 * roll's overlap is still running (its old secret still works: one roll at a time).
 */
export type KeyChange =
  | { state: "changed"; record: ApiKeyRecord }
  | { state: "missing" }
  | { state: "revoked"; record: ApiKeyRecord }
  | { state: "rolling"; record: ApiKeyRecord };

/** What a change did; a `create` or an `update` of an account names it in `keyId` (`acct_...`). */
export type AuditAction = "create" | "update" | "roll" | "revoke" | "unban";

/** One change, as the audit trail keeps it: never edited, never deleted by the API. */
export interface AuditEntry {
  /** Increasing in the order the store recorded the changes. */
  id: number;
  /** Unix ms, by the store's clock. */
  at: number;
  action: AuditAction;
  keyId: string;
  actor: Actor;
  /** What changed (the new plan, the overlap's end...): never key material. */
  details?: Record<string, unknown>;
}

/**
 * What a key's record says it is at an instant: `live` (neither revoked nor expired),
 * `rolling` (not revoked, the overlap of its last roll still running: its old secret works
 * too), `expired` (its expiry passed, revoked or not), `revoked`. A ban is no record's: the
 * limiter holds it. Core's `keyRecordIs` is the rule; a store's query says the same.
 */
export type KeyRecordState = "live" | "rolling" | "expired" | "revoked";

/**
 * The order of a list of keys: `created` (the order they were made), `lastUsed` (the latest
 * `lastUsedAt` first, keys never used last), `today` (the most requests admitted in the store's
 * current UTC day first, by the usage history). Ties go in the order the keys were made.
 */
export type KeyOrder = "created" | "lastUsed" | "today";

/** A page of keys: at most `limit`, after the key `afterId` in `order`, those of `plan` and in `state`. */
export interface KeyListQuery {
  limit: number;
  /** The page starts after this key, where it is now in the order (a key not found: an empty page). */
  afterId?: string;
  plan?: PlanName;
  state?: KeyRecordState;
  /** The keys of this account only (a store keeps them indexed by account). */
  accountId?: string;
  /** Default `created`. */
  order?: KeyOrder;
}

/** A page of accounts in the order they were made: at most `limit`, after the account `afterId`, those of `plan`. */
export interface AccountListQuery {
  limit: number;
  afterId?: string;
  plan?: PlanName;
}

/** A page of the audit trail, newest first (see `ApiKeys.auditTrail`). */
export interface AuditQuery {
  limit: number;
  beforeId?: number;
  keyId?: string;
  action?: AuditAction;
  /** An actor's `who`, exactly. */
  actor?: string;
}

/**
 * API key storage. Keys are made by core's key life (`issueApiKey`, `keyLife`), which hashes
 * them, checks them and writes what the audit trail says before they get here. Every change
 * with a note is recorded in the audit trail in the same atomic write as the change itself, so
 * the trail never misses a change that happened nor holds one that did not. Instants (a key's
 * creation, a revocation, a roll's, the trail's) are the store's clock. Each key's usage history
 * is kept beside it (`KeyUsage`), so every key store has one, whatever holds the limits.
 */
export interface ApiKeys extends KeyUsage {
  /**
   * Stores a key unless one has its id or its hash (current or previous): then `duplicate`,
   * and nothing is written. With the `accountId` of another account, that one must exist (else `no_account`).
   */
  insert(record: NewApiKeyRecord, note?: AuditNote): Promise<KeyInsert>;
  /** Stores an account unless one has its id: then `duplicate`, and nothing is written. */
  insertAccount(record: NewAccountRecord, note?: AuditNote): Promise<AccountInsert>;
  getAccount(id: string): Promise<AccountRecord | undefined>;
  /** Accounts in the order they were made; a page of at most `limit` after the account `afterId` (of one `plan`), or all. */
  listAccounts(page?: AccountListQuery): Promise<AccountRecord[]>;
  /** How many keys each of these accounts has, revoked and expired ones too (0 for an account without any, or none by that id): one read. */
  countKeys(accountIds: readonly string[]): Promise<Record<string, number>>;
  /**
   * Changes an account, with no key written: its keys that follow it read its plan and limits
   * with it; a key with caps of its own keeps them. Its ranges stay the account's: `findByHash`
   * reads them with each key.
   */
  updateAccount(id: string, changes: AccountChanges, note: AuditNote): Promise<AccountChange>;
  /**
   * The key whose secret has this hash: its current one, or its previous one (the secret
   * before the last roll) whether or not the roll's overlap still runs. Revoked and expired
   * keys are returned too: core refuses them, and says why.
   */
  findByHash(hash: string): Promise<ApiKeyRecord | undefined>;
  get(id: string): Promise<ApiKeyRecord | undefined>;
  /**
   * Keys in the order they were made, or all; a page of at most `limit` after the key `afterId`
   * in the query's order, of the keys of `plan` in `state` (at the store's instant), of one account.
   */
  list(query?: KeyListQuery): Promise<ApiKeyRecord[]>;
  /**
   * Changes a key (see `KeyChanges` for its plan and limits). A change of the account made for
   * it is made in the same write and audited under the account's id.
   */
  update(id: string, changes: KeyChanges, note: AuditNote): Promise<KeyChange>;
  /**
   * A new secret (`hash`) for the same record; the current one becomes the previous one,
   * accepted for `overlapMs` from now (0: refused at once). Refused while an earlier roll's
   * overlap runs (`rolling`) and on a revoked key.
   */
  roll(id: string, hash: string, overlapMs: number, note: AuditNote): Promise<KeyChange>;
  /** Revoking twice keeps the first time (and answers `revoked`). */
  revoke(id: string, note?: AuditNote): Promise<KeyChange>;
  /** Records a change made elsewhere (a ban lifted in the limiter, an admin token made) in the trail. */
  audit(action: AuditAction, keyId: string, note: AuditNote): Promise<void>;
  /**
   * The trail, newest first: a page of at most `limit` entries before `beforeId`, of one key
   * (`keyId`) or all, of one `action` or all, made by one actor (`actor`: its `who`) or any.
   */
  auditTrail(query: AuditQuery): Promise<AuditEntry[]>;
}

/** A key's requests by how they were answered, over some span of time. */
export interface UsageCounts {
  /** Admitted by its limits (whatever the operation then answered: a 404 or a 400 too). */
  admitted: number;
  /** Refused `429 rate_limited`. */
  rateLimited: number;
  /** Refused `429 temporarily_banned`. */
  banned: number;
  /** Refused `401`: a revoked or expired key, or a secret of it replaced by a roll whose overlap ended. */
  unauthorized: number;
}

/** What one server counted of one key within one minute, by the limiter's clock. */
export interface UsageTally extends UsageCounts {
  keyId: string;
  /** The minute's start, Unix ms (a multiple of 60,000). */
  minute: number;
  /** The latest of its requests the key was identified on (admitted or refused by its limits), if any. */
  lastUsedAt?: number;
}

/** How finely usage is kept: by minute, and by UTC day. */
export type UsageResolution = "minute" | "day";

/** One span's counts of one key: `at` is the start of its minute or UTC day. */
export interface UsageRow extends UsageCounts {
  at: number;
}

/** One key's counts over a span, for the keys that used the most. */
export interface KeyUsageTotal extends UsageCounts {
  keyId: string;
}

/**
 * How long a store keeps usage rows, by the start of their span and the store's clock: 49 hours
 * of minutes and 401 UTC days, an hour and a day more than the reads promise (48 h, 400 days),
 * so that a read from the edge, rounded down to its hour or day, finds every row it covers.
 */
export const USAGE_KEPT_MS: Readonly<Record<UsageResolution, number>> = {
  minute: 49 * 3_600_000,
  day: 401 * 86_400_000,
};

/**
 * Each key's usage history, by outcome, in its key store: by minute and by UTC day. Servers
 * count in memory and add their counts together, so a request costs no write; adding is a sum,
 * so servers adding at once lose nothing.
 */
export interface KeyUsage {
  /**
   * Adds the counts of each tally to its key's minute and to the minute's UTC day (tallies of
   * one key and minute may repeat: they add up), moves each key's `lastUsedAt` to its tallies'
   * latest `lastUsedAt` unless it is later already, and sweeps rows older than `USAGE_KEPT_MS`
   * by the store's clock. One atomic write.
   */
  addUsage(tallies: readonly UsageTally[]): Promise<void>;
  /** One key's rows at `resolution` whose span starts in `[from, to)`, oldest first; a span without requests has none. */
  usage(query: { keyId: string; resolution: UsageResolution; from: number; to: number }): Promise<UsageRow[]>;
  /**
   * The keys with the most requests (all four counts) or refusals (all but `admitted`) in the
   * rows at `resolution` whose span starts in `[from, to)`, most first (a tie by id), at most
   * `limit`, each with its totals; keys with none of what is ranked are left out.
   */
  topUsage(query: {
    resolution: UsageResolution;
    from: number;
    to: number;
    by: "requests" | "refusals";
    limit: number;
  }): Promise<KeyUsageTotal[]>;
}

/** An admin token as stored: its SHA-256 only. Times by the store's clock. */
export interface AdminTokenRecord {
  /** `tok_` and 12 base62 characters, also the token's first part (so it is found without its secret). */
  id: string;
  /** Lowercase hex SHA-256 of the whole token. */
  hash: string;
  label?: string;
  createdAt: number;
  revokedAt?: number;
}

/**
 * Admin token storage: the credentials of the admin API on the `petstore` binary's own
 * listener (`createAdmin` itself takes any authentication). Made by `issueAdminToken`.
 */
export interface AdminTokens {
  /** Stores a token; its `createdAt` is the store's instant. Answers the record as stored. */
  insert(record: Omit<AdminTokenRecord, "createdAt">): Promise<AdminTokenRecord>;
  get(id: string): Promise<AdminTokenRecord | undefined>;
  /** In the order they were made. */
  list(): Promise<AdminTokenRecord[]>;
  /** Revoking twice keeps the first time (`already_revoked`); `missing` when no token has the id. */
  revoke(id: string): Promise<"revoked" | "already_revoked" | "missing">;
}
