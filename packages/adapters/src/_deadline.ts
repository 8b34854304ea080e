/**
 * `work`'s outcome, or `late()` as its failure once `ms` have passed without one. The timer
 * does not keep a process alive by itself.
 */
export function withinDeadline<T>(work: PromiseLike<T>, ms: number, late: () => Error): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(late()), ms);
    (timer as { unref?: () => void }).unref?.();
    work.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}
