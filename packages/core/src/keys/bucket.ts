/** The rate-limit bucket a key's requests count against, in every limiter: its name is written here only. */
export const keyBucket = (keyId: string): string => `key:${keyId}`;
