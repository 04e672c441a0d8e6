/**
 * Group commit for reader event batches. One transaction per batch made
 * PostgreSQL the limit of ingestion (per batch four or more round trips and
 * one WAL flush, the service waiting most of the time); here the batches
 * that arrive together in one process are stored together: one transaction,
 * a constant number of statements and one WAL flush per group, whatever its
 * size.
 *
 *  - A batch waits for the end of the event-loop turn (setImmediate), so the
 *    batches of every request read in that turn join the same group.
 *  - At most `maxInFlight` groups run at once (2 on PostgreSQL: one commits
 *    while the next one gathers; 1 on PGlite, which has one connection); the
 *    batches that arrive meanwhile queue for the next group, which grows with
 *    the load. A group takes at most `maxItems` batches and, beyond its first
 *    batch, `maxWeight` events.
 *  - Batches of one key (book and session) never share a group, nor run in
 *    two groups at once: a later batch of a session waits for the next group
 *    after the one holding its predecessor (one statement cannot upsert the
 *    same view row twice, and the session's batches keep their order).
 *  - A caller's promise settles only after its group committed (a 2xx still
 *    means stored). When a group fails, each of its batches is retried alone,
 *    one after the other, so one bad batch fails alone.
 */

export interface GroupCommitOptions<T, R> {
  /** Items of one key never share a group and are stored in submission order. */
  key(item: T): string;
  /** An item's size toward maxWeight. */
  weight(item: T): number;
  /** Stores the items in one transaction; answers their results in order. */
  store(items: T[]): Promise<R[]>;
  maxInFlight: number;
  maxItems: number;
  maxWeight: number;
}

interface Waiting<T, R> {
  item: T;
  key: string;
  resolve(result: R): void;
  reject(error: unknown): void;
}

export interface GroupCommitStats {
  /** Groups stored (a retried item alone counts as a group of one). */
  groups: number;
  /** The most items one group held. */
  largest: number;
  /** Groups that failed and had their items retried one by one. */
  retried: number;
}

export class GroupCommit<T, R> {
  private readonly options: GroupCommitOptions<T, R>;
  private pending: Waiting<T, R>[] = [];
  /** Keys of the items in groups now running. */
  private readonly busy = new Set<string>();
  private inFlight = 0;
  private scheduled = false;
  readonly stats: GroupCommitStats = { groups: 0, largest: 0, retried: 0 };

  constructor(options: GroupCommitOptions<T, R>) {
    this.options = options;
  }

  submit(item: T): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.pending.push({ item, key: this.options.key(item), resolve, reject });
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled || this.inFlight >= this.options.maxInFlight || this.pending.length === 0) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.startGroups();
    });
  }

  private startGroups(): void {
    while (this.inFlight < this.options.maxInFlight) {
      const group = this.take();
      if (group.length === 0) return;
      this.inFlight++;
      void this.run(group).finally(() => {
        this.inFlight--;
        for (const waiting of group) this.busy.delete(waiting.key);
        this.schedule();
      });
    }
  }

  /** The next group, in arrival order: skips (and keeps queued) every item whose key is busy or already taken or passed over. */
  private take(): Waiting<T, R>[] {
    const { maxItems, maxWeight } = this.options;
    const group: Waiting<T, R>[] = [];
    const kept: Waiting<T, R>[] = [];
    const passed = new Set<string>();
    let weight = 0;
    let i = 0;
    for (; i < this.pending.length && group.length < maxItems; i++) {
      const waiting = this.pending[i]!;
      const itemWeight = this.options.weight(waiting.item);
      if (this.busy.has(waiting.key) || passed.has(waiting.key) || (group.length > 0 && weight + itemWeight > maxWeight)) {
        passed.add(waiting.key);
        kept.push(waiting);
        continue;
      }
      group.push(waiting);
      this.busy.add(waiting.key);
      weight += itemWeight;
    }
    this.pending = i < this.pending.length ? kept.concat(this.pending.slice(i)) : kept;
    return group;
  }

  private async run(group: Waiting<T, R>[]): Promise<void> {
    try {
      const results = await this.stored(group.map((w) => w.item));
      group.forEach((waiting, i) => waiting.resolve(results[i]!));
      return;
    } catch (error) {
      if (group.length === 1) {
        group[0]!.reject(error);
        return;
      }
    }
    this.stats.retried++;
    for (const waiting of group) {
      try {
        waiting.resolve((await this.stored([waiting.item]))[0]!);
      } catch (error) {
        waiting.reject(error);
      }
    }
  }

  private async stored(items: T[]): Promise<R[]> {
    const results = await this.options.store(items);
    this.stats.groups++;
    this.stats.largest = Math.max(this.stats.largest, items.length);
    return results;
  }
}
