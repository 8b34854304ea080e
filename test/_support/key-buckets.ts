import { keyBucket, ownAccountId } from "@petstore/core";

/** The rate-limit bucket of a key made alone (`petstore keys create` without an account): in its own account's group. */
export const bucketOf = (keyId: string): string => keyBucket(keyId, ownAccountId(keyId));
