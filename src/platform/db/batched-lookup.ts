/**
 * Look-ups by key gathered per event-loop turn: every key asked for during
 * one turn is read with one query at the end of it (setImmediate), and each
 * caller gets its own answer. Under load the public reader's requests (page
 * views, reader event batches) each read their book by its public id; a
 * burst of 50 batches for one book then costs one indexed read instead of
 * 50 round trips. Nothing is cached: every query starts after the requests
 * it answers arrived, so a change committed before a request is seen by it.
 *
 * Keys may be structured ({ bookId, slug }); `idOf` names each one as a
 * string, so equal keys asked twice in a turn are read once, and `load`
 * answers by those names.
 */
export class BatchedLookup<K, V> {
  private readonly load: (keys: K[]) => Promise<Map<string, V>>;
  private readonly idOf: (key: K) => string;
  private pending = new Map<string, { key: K; waiting: { resolve: (value: V | undefined) => void; reject: (error: unknown) => void }[] }>();
  private scheduled = false;

  /** `load` answers the rows it found by `idOf(key)`; a key it leaves out is answered `undefined`. */
  constructor(load: (keys: K[]) => Promise<Map<string, V>>, idOf: (key: K) => string) {
    this.load = load;
    this.idOf = idOf;
  }

  get(key: K): Promise<V | undefined> {
    return new Promise((resolve, reject) => {
      const id = this.idOf(key);
      const entry = this.pending.get(id);
      if (entry) entry.waiting.push({ resolve, reject });
      else this.pending.set(id, { key, waiting: [{ resolve, reject }] });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => void this.flush());
      }
    });
  }

  private async flush(): Promise<void> {
    this.scheduled = false;
    const batch = this.pending;
    this.pending = new Map();
    try {
      const found = await this.load([...batch.values()].map((entry) => entry.key));
      for (const [id, entry] of batch) for (const w of entry.waiting) w.resolve(found.get(id));
    } catch (error) {
      for (const entry of batch.values()) for (const w of entry.waiting) w.reject(error);
    }
  }
}
