import { describe, expect, test } from 'vitest';
import type { Counter } from '../src/platform/ratelimit-counter.js';
import { leased } from '../src/platform/ratelimit-lease.js';
import { memoryCounters } from '../src/platform/ratelimit-store.js';

/** A shared store (one budget for every replica), counting the statements it would run. */
function sharedStore(points: number, durationSeconds = 60) {
  const inner = memoryCounters({ name: `t${Math.random()}`, points, durationSeconds });
  const calls = { consume: 0, refund: 0 };
  const store: Counter = {
    consume: (key, n) => {
      calls.consume++;
      return inner.consume(key, n);
    },
    refund: (key, n) => {
      calls.refund++;
      return inner.refund(key, n);
    },
    reset: (key) => inner.reset(key),
  };
  return { store, calls };
}

async function admitted(counter: Counter, key: string, tries: number): Promise<number> {
  let allowed = 0;
  for (let i = 0; i < tries; i++) if ((await counter.consume(key)).allowed) allowed++;
  return allowed;
}

describe('leased counters', () => {
  test('one replica admits exactly the budget, with a statement per block of 1 %', async () => {
    const { store, calls } = sharedStore(600);
    const counter = leased(store, 600);
    expect(await admitted(counter, 'k', 700)).toBe(600);
    // 100 blocks of 6, then one refused block; the 99 refusals after it cost nothing.
    expect(calls.consume).toBe(101);
  });

  test('a budget that is not a whole number of blocks is still admitted to the last point', async () => {
    const { store } = sharedStore(653);
    expect(await admitted(leased(store, 653), 'k', 700)).toBe(653);
  });

  test('replicas together never admit more than the budget, and at most a block each less', async () => {
    const { store } = sharedStore(600);
    const replicas = [leased(store, 600), leased(store, 600), leased(store, 600)];
    let allowed = 0;
    for (let i = 0; i < 900; i++) if ((await (replicas[i % 3] as Counter).consume('k')).allowed) allowed++;
    expect(allowed).toBeLessThanOrEqual(600);
    expect(allowed).toBeGreaterThanOrEqual(600 - 2 * 5);
  });

  test('concurrent requests on one key wait for one block instead of each taking one', async () => {
    const { store, calls } = sharedStore(600);
    const counter = leased(store, 600);
    const answers = await Promise.all(Array.from({ length: 6 }, () => counter.consume('k')));
    expect(answers.every((a) => a.allowed)).toBe(true);
    expect(calls.consume).toBe(1);
  });

  test('a point given back is spent again before the store is asked', async () => {
    const { store, calls } = sharedStore(600);
    const counter = leased(store, 600);
    await counter.consume('k');
    await counter.refund('k');
    for (let i = 0; i < 6; i++) expect((await counter.consume('k')).allowed).toBe(true);
    expect(calls).toEqual({ consume: 1, refund: 0 });
  });

  test('headers see the whole budget: remaining counts down by one per request', async () => {
    const { store } = sharedStore(600);
    const counter = leased(store, 600);
    const seen = [];
    for (let i = 0; i < 8; i++) seen.push((await counter.consume('k')).remaining);
    expect(seen).toEqual([599, 598, 597, 596, 595, 594, 593, 592]);
  });

  test('a lease ends with the window it was taken in', async () => {
    let now = 1_000_000;
    const { store, calls } = sharedStore(600, 1);
    const counter = leased(store, 600, () => now);
    await counter.consume('k');
    now += 2000;
    await counter.consume('k');
    expect(calls.consume).toBe(2);
  });

  test('a small budget is counted in the store, exactly, request by request', async () => {
    const { store, calls } = sharedStore(20);
    expect(leased(store, 20)).toBe(store);
    expect(await admitted(leased(store, 20), 'k', 30)).toBe(20);
    expect(calls.consume).toBe(30);
  });
});
