/**
 * A bounded cache in two generations: new entries go into the young map; when its budget is
 * spent, the old map is dropped whole and the young one becomes old. A hit in the old map
 * moves the entry back to the young one, so what is used stays (roughly least recently used
 * out first). Every operation is O(1): unlike a `Map` used as a FIFO queue, no iteration over
 * the deleted entries at the front of a map (V8 keeps them until it rehashes).
 */
export class TwoGenerationCache<K, V> {
  private young = new Map<K, V>();
  private old = new Map<K, V>();
  private spent = 0;

  /** `budget` per generation, in the units `cost` counts (default: one per entry). */
  constructor(
    private readonly budget: number,
    private readonly cost: (value: V) => number = () => 1,
  ) {}

  get(key: K): V | undefined {
    const hit = this.young.get(key);
    if (hit !== undefined) return hit;
    const old = this.old.get(key);
    if (old !== undefined) {
      this.old.delete(key);
      this.set(key, old);
    }
    return old;
  }

  set(key: K, value: V): void {
    if (this.young.has(key)) return;
    if (this.spent >= this.budget) {
      this.old = this.young;
      this.young = new Map();
      this.spent = 0;
    }
    this.young.set(key, value);
    this.spent += this.cost(value);
  }
}
