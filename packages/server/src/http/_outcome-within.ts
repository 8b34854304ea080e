/** How a promise ended within a time limit: fulfilled, rejected, or still pending at the limit. */
export async function outcomeWithin(
  promise: Promise<unknown>,
  ms: number,
): Promise<"fulfilled" | "rejected" | "timeout"> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<"timeout">((resolve) => (timer = setTimeout(resolve, ms, "timeout")));
  const settled = promise.then(
    () => "fulfilled" as const,
    () => "rejected" as const,
  );
  try {
    return await Promise.race([settled, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
