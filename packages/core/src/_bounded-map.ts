/**
 * A Map that holds at most `limit` entries: setting one more forgets the oldest (the one set
 * longest ago; setting a key again makes it the newest). The pipeline's per-process memories
 * (verified keys, pages of pets) use it, so neither can grow without bound.
 */
export class BoundedMap<K, V> {
  readonly #entries = new Map<K, V>();

  constructor(readonly limit: number) {}

  get size(): number {
    return this.#entries.size;
  }

  has(key: K): boolean {
    return this.#entries.has(key);
  }

  get(key: K): V | undefined {
    return this.#entries.get(key);
  }

  set(key: K, value: V): this {
    // A Map keeps insertion order, so its first key is the oldest.
    if (!this.#entries.delete(key) && this.#entries.size >= this.limit)
      this.#entries.delete(this.#entries.keys().next().value!);
    this.#entries.set(key, value);
    return this;
  }

  /** Forgets every entry whose value `matches`: a walk over them all, for what is rare (a key changed by an operator). */
  deleteWhere(matches: (value: V) => boolean): void {
    for (const [key, value] of this.#entries) if (matches(value)) this.#entries.delete(key);
  }
}
