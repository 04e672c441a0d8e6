/**
 * Look-ups by key gathered per event-loop turn: every key asked for during
 * one turn is read with one query at the end of it (setImmediate), and each
 * caller gets its own answer. Under load the public reader's requests (page
 * views, reader event batches) each read their book by its public id; a
 * burst of 50 batches for one book then costs one indexed read instead of
 * 50 round trips. Nothing is cached: every query starts after the requests
 * it answers arrived, so a change committed before a request is seen by it.
 */
export class BatchedLookup<K, V> {
  private readonly load: (keys: K[]) => Promise<Map<K, V>>;
  private pending = new Map<K, { resolve: (value: V | undefined) => void; reject: (error: unknown) => void }[]>();
  private scheduled = false;

  /** `load` answers the rows it found, by key; a key it leaves out is answered `undefined`. */
  constructor(load: (keys: K[]) => Promise<Map<K, V>>) {
    this.load = load;
  }

  get(key: K): Promise<V | undefined> {
    return new Promise((resolve, reject) => {
      const waiting = this.pending.get(key);
      if (waiting) waiting.push({ resolve, reject });
      else this.pending.set(key, [{ resolve, reject }]);
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
      const found = await this.load([...batch.keys()]);
      for (const [key, waiting] of batch) for (const w of waiting) w.resolve(found.get(key));
    } catch (error) {
      for (const waiting of batch.values()) for (const w of waiting) w.reject(error);
    }
  }
}
