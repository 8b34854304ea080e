/**
 * The rate-limit buckets a key's requests count against, in every limiter: their names are
 * written here only. Both begin with the account's group (`{acct_...}`), so a limiter that
 * spreads buckets (Redis Cluster, Durable Objects) keeps an account's together.
 */

/** The bucket of a key's own limits: refusals count toward its ban here. */
export const keyBucket = (keyId: string, accountId: string): string => `{${accountId}}key:${keyId}`;

/** The bucket of an account's limits, shared by its keys. */
export const accountBucket = (accountId: string): string => `{${accountId}}`;

/** The id of the account made for a key (`keys create` without an account, and the upgrade): `acct_` and its id's characters after `key_`. */
export const ownAccountId = (keyId: string): string => `acct_${keyId.replace(/^key_/, "")}`;
