/**
 * A mistake on the command line: printed as one line naming the flag or value, then a usage
 * hint, and the process exits with code 2.
 */
export class UsageError extends Error {
  override name = "UsageError";
}
