import { errorChain, StorageUnavailableError } from "@petstore/core";

/**
 * An engine's `storageError`: `error` as the adapters throw it, a `StorageUnavailableError`
 * (a 503 the client may retry) when storage cannot be used now, else as it is. `reasonOf`
 * says why for one error of the chain, in a few words an operator reads in `/healthz` and the
 * logs, or undefined when that one means "this statement is wrong"; the drivers wrap their
 * causes, so the chain is walked (five deep at most).
 */
export function storageErrors(reasonOf: (cause: Error) => string | undefined): (error: unknown) => unknown {
  return (error) => {
    if (error instanceof StorageUnavailableError) return error;
    for (const cause of errorChain(error)) {
      const reason = cause instanceof StorageUnavailableError ? cause.message : reasonOf(cause);
      if (reason !== undefined) return new StorageUnavailableError(reason, { cause: error });
    }
    return error;
  };
}
