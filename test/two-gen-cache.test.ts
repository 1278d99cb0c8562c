import { describe, expect, it } from 'vitest';
import { TwoGenerationCache } from '../src/chain/two-gen-cache.js';

describe('TwoGenerationCache', () => {
  it('forgets the least recently used generation whole; a hit in the old one moves the entry back', () => {
    const c = new TwoGenerationCache<string, number>(2);
    c.set('a', 1);
    c.set('b', 2);
    c.set('c', 3); // young {a, b} becomes old
    expect(c.get('a')).toBe(1); // back to the young generation: {c, a}
    c.set('d', 4); // old {c, a}, young {d}: b is gone
    expect(c.get('b')).toBeUndefined();
    expect(c.get('a')).toBe(1);
    expect(c.get('c')).toBe(3);
    expect(c.get('d')).toBe(4);
  });

  it('keeps falsy values and a budget counted by cost', () => {
    const c = new TwoGenerationCache<string, number | null>(10, (v) => (v === null ? 1 : v));
    c.set('null', null);
    c.set('zero', 0);
    expect(c.get('null')).toBeNull();
    expect(c.get('zero')).toBe(0);
    c.set('big', 9); // 10 spent: the next set starts a generation
    c.set('next', 1); // old {null, zero, big}, young {next}
    c.set('after', 10); // young {next, after} is over its budget: the next set drops old {null, zero, big}
    c.set('last', 1);
    expect(c.get('null')).toBeUndefined();
    expect(c.get('next')).toBe(1);
  });

  it('holds between one and two budgets of entries', () => {
    const c = new TwoGenerationCache<number, number>(1 << 15);
    for (let i = 0; i < 300_000; i++) c.set(i, i);
    let held = 0;
    for (let i = 0; i < 300_000; i++) if (c.get(i) !== undefined) held++;
    expect(held).toBeGreaterThanOrEqual(1 << 15);
    expect(held).toBeLessThanOrEqual(1 << 16);
  });
});
