import { accountBucket, keyBucket, ownAccountId } from "@petstore/core";

/** The rate-limit bucket of a key made alone (`petstore keys create` without an account): in its own account's group. */
export const bucketOf = (keyId: string): string => keyBucket(keyId, ownAccountId(keyId));

/** The bucket of the account made for a key: its plan's limits, counted beside the key's own. */
export const accountBucketOf = (keyId: string): string => accountBucket(ownAccountId(keyId));
