// The per-replica cache of computers' rows, on its own: what it keeps, what drops it, and that a hit
// is served only after the notification barrier.
import { describe, expect, test } from 'vitest';
import { ReadCache } from '../../src/computers/repositories/read-cache.js';

const WS = 'wsp_1';

/** A loader that counts its calls and answers the current value of `source`. */
function loader(source: { value: string }) {
  const calls = { n: 0 };
  return {
    calls,
    load: async () => {
      calls.n++;
      return source.value;
    },
  };
}

describe('ReadCache', () => {
  test('a repeated read is served from the cache; an invalidation of its workspace drops it', async () => {
    const cache = new ReadCache(async () => {});
    const source = { value: 'a' };
    const { calls, load } = loader(source);
    expect(await cache.get(WS, 'k', load)).toBe('a');
    expect(await cache.get(WS, 'k', load)).toBe('a');
    expect(calls.n).toBe(1);
    source.value = 'b';
    cache.invalidate('wsp_other');
    expect(await cache.get(WS, 'k', load)).toBe('a');
    cache.invalidate(WS);
    expect(await cache.get(WS, 'k', load)).toBe('b');
    expect(calls.n).toBe(2);
  });

  test('a hit waits for the barrier, and a change heard during it is not answered from the cache', async () => {
    let barrierCalls = 0;
    let onBarrier: () => void = () => {};
    const cache = new ReadCache(async () => {
      barrierCalls++;
      onBarrier();
    });
    const source = { value: 'old' };
    const { calls, load } = loader(source);
    await cache.get(WS, 'k', load);
    expect(barrierCalls).toBe(0); // a miss needs none: the database answers
    // A change committed before this read: its notification arrives while the barrier runs.
    onBarrier = () => {
      source.value = 'new';
      cache.invalidate(WS);
    };
    expect(await cache.get(WS, 'k', load)).toBe('new');
    expect(barrierCalls).toBe(1);
    expect(calls.n).toBe(2);
  });

  test('a barrier that fails (no listening connection) clears the cache and reads the database', async () => {
    let listening = true;
    const cache = new ReadCache(async () => {
      if (!listening) throw new Error('not listening');
    });
    const source = { value: 'a' };
    const { calls, load } = loader(source);
    await cache.get(WS, 'k', load);
    await cache.get('wsp_2', 'k', load);
    expect(cache.rows).toBe(2);
    listening = false;
    source.value = 'b';
    expect(await cache.get(WS, 'k', load)).toBe('b');
    expect(calls.n).toBe(3);
    // Cleared, then only this read's answer is stored again.
    expect(cache.rows).toBe(1);
  });

  test('a load that raced a change of its workspace is answered but not stored', async () => {
    const cache = new ReadCache(async () => {});
    let calls = 0;
    const racing = async () => {
      calls++;
      cache.invalidate(WS); // the change commits while the row is on its way
      return 'stale';
    };
    expect(await cache.get(WS, 'k', racing)).toBe('stale');
    expect(cache.rows).toBe(0);
    // Another workspace's change does not stop a load from being stored.
    await cache.get(WS, 'k', async () => {
      calls++;
      cache.invalidate('wsp_other');
      return 'fresh';
    });
    expect(cache.rows).toBe(1);
    expect(await cache.get(WS, 'k', racing)).toBe('fresh');
    expect(calls).toBe(2);
  });

  test('a cleared cache does not store loads that began before the clear', async () => {
    const cache = new ReadCache(async () => {});
    await cache.get(WS, 'k', async () => {
      cache.clear();
      return 'x';
    });
    expect(cache.rows).toBe(0);
  });

  test('entries expire after the TTL', async () => {
    let now = 1_000;
    const cache = new ReadCache(async () => {}, { ttlMs: 1000, now: () => now });
    const source = { value: 'a' };
    const { calls, load } = loader(source);
    await cache.get(WS, 'k', load);
    now += 999;
    await cache.get(WS, 'k', load);
    expect(calls.n).toBe(1);
    now += 2;
    source.value = 'b';
    expect(await cache.get(WS, 'k', load)).toBe('b');
    expect(calls.n).toBe(2);
  });

  test('an error is never cached', async () => {
    const cache = new ReadCache(async () => {});
    await expect(
      cache.get(WS, 'k', async () => {
        throw new Error('not found');
      }),
    ).rejects.toThrow('not found');
    expect(cache.rows).toBe(0);
    expect(await cache.get(WS, 'k', async () => 'there')).toBe('there');
  });

  test('holds at most maxRows rows, weighing a page by its rows', async () => {
    const cache = new ReadCache(async () => {}, { maxRows: 100 });
    const page = Array.from({ length: 60 }, (_, i) => i);
    await cache.get(WS, 'p1', async () => page, { weight: (rows) => rows.length });
    expect(cache.rows).toBe(60);
    await cache.get(WS, 'p1', async () => page, { weight: (rows) => rows.length });
    expect(cache.rows).toBe(60);
    // A second page would pass the bound: the cache starts again from empty.
    await cache.get('wsp_2', 'p2', async () => page, { weight: (rows) => rows.length });
    expect(cache.rows).toBe(60);
    let reloaded = false;
    await cache.get(
      WS,
      'p1',
      async () => {
        reloaded = true;
        return page;
      },
      { weight: (rows) => rows.length },
    );
    expect(reloaded).toBe(true);
  });

  test('a change of one computer drops what it touches and keeps the rest of its workspace', async () => {
    const cache = new ReadCache(async () => {});
    const values = { a: 'a1', b: 'b1', page: 'p1' };
    const loads = { a: 0, b: 0, page: 0 };
    const read = (key: 'a' | 'b' | 'page') =>
      cache.get(
        WS,
        key,
        async () => {
          loads[key]++;
          return values[key];
        },
        // The page holds a and b; each row only itself.
        {
          touches: () => (changed) => (key === 'page' ? changed === 'a' || changed === 'b' : changed === key),
        },
      );
    for (const key of ['a', 'b', 'page'] as const) await read(key);
    values.a = 'a2';
    values.page = 'p2';
    cache.invalidate(WS, 'a');
    expect([await read('a'), await read('b'), await read('page')]).toEqual(['a2', 'b1', 'p2']);
    expect(loads).toEqual({ a: 2, b: 1, page: 2 });
    // A computer neither holds touches nothing; an entry that says nothing is dropped by any change.
    await cache.get(WS, 'any', async () => 'x');
    cache.invalidate(WS, 'c');
    expect(cache.rows).toBe(3);
    // A change of the workspace as a whole drops everything of it.
    cache.invalidate(WS);
    expect(cache.rows).toBe(0);
  });

  test('reads arriving while a load is under way share it; after a change they load on their own', async () => {
    const cache = new ReadCache(async () => {});
    let loads = 0;
    let value = 'v1';
    let release: () => void = () => {};
    const slow = async () => {
      loads++;
      const seen = value;
      await new Promise<void>((resolve) => {
        release = resolve;
      });
      return seen;
    };
    const first = cache.get(WS, 'k', slow);
    const second = cache.get(WS, 'k', slow);
    await new Promise((resolve) => setImmediate(resolve));
    release();
    expect(await Promise.all([first, second])).toEqual(['v1', 'v1']);
    expect(loads).toBe(1);
    // A change while a load is under way: a read arriving after it must not take the older answer.
    cache.invalidate(WS);
    const before = cache.get(WS, 'k', slow);
    await new Promise((resolve) => setImmediate(resolve));
    const releaseBefore = release;
    value = 'v2';
    cache.invalidate(WS, 'some-computer');
    const after = cache.get(WS, 'k', slow);
    await new Promise((resolve) => setImmediate(resolve));
    releaseBefore();
    release();
    expect(await before).toBe('v1');
    expect(await after).toBe('v2');
    expect(loads).toBe(3);
  });

  test('a load that raced a change of another computer is stored; one that raced its own is not', async () => {
    const cache = new ReadCache(async () => {});
    let loads = 0;
    const read = (computerId: string, during?: () => void) =>
      cache.get(
        WS,
        `computer:${computerId}`,
        async () => {
          loads++;
          during?.();
          return { id: computerId };
        },
        { touches: (row) => (changed) => changed === row.id },
      );
    await read('a', () => cache.invalidate(WS, 'b'));
    await read('a');
    expect(loads).toBe(1); // stored: b's change cannot touch a's row
    await read('c', () => cache.invalidate(WS, 'c'));
    await read('c');
    expect(loads).toBe(3); // not stored: c changed while it loaded
    // A change of the whole workspace while loading touches everything.
    await read('d', () => cache.invalidate(WS));
    await read('d');
    expect(loads).toBe(5);
  });

  describe('a hit whose entry changed while its barrier ran', () => {
    /** A barrier that waits until `pass()`; every read waiting on it passes at once. */
    function heldBarrier() {
      let pass: () => void = () => {};
      let gate = Promise.resolve();
      return {
        close: () => {
          gate = new Promise<void>((resolve) => {
            pass = resolve;
          });
        },
        pass: () => pass(),
        barrier: () => gate,
      };
    }
    /** Loads that read `source.value` as they begin and answer it when released, in order. */
    function slowLoads(source: { value: string }) {
      const pending: (() => void)[] = [];
      let n = 0;
      return {
        count: () => n,
        release: () => pending.shift()?.(),
        releaseAll: () => {
          for (const resolve of pending.splice(0)) resolve();
        },
        load: async () => {
          n++;
          const seen = source.value;
          await new Promise<void>((resolve) => pending.push(resolve));
          return seen;
        },
      };
    }
    const settle = () => new Promise((resolve) => setImmediate(resolve));

    test('a newer entry stored meanwhile answers it, with no load of its own', async () => {
      const gate = heldBarrier();
      const cache = new ReadCache(gate.barrier);
      const source = { value: 'v1' };
      const { calls, load } = loader(source);
      await cache.get(WS, 'k', load);
      gate.close();
      const waiting = cache.get(WS, 'k', load);
      // Dropped by a change, then read again by a reader arriving after it: stored anew.
      source.value = 'v2';
      cache.invalidate(WS);
      expect(await cache.get(WS, 'k', load)).toBe('v2');
      gate.pass();
      expect(await waiting).toBe('v2');
      expect(calls.n).toBe(2);
    });

    test('dropped meanwhile, the readers that found it share one load begun after they arrived', async () => {
      const gate = heldBarrier();
      const cache = new ReadCache(gate.barrier);
      const source = { value: 'v1' };
      const loads = slowLoads(source);
      const first = cache.get(WS, 'k', loads.load);
      await settle();
      loads.release();
      await first;
      gate.close();
      const readers = [
        cache.get(WS, 'k', loads.load),
        cache.get(WS, 'k', loads.load),
        cache.get(WS, 'k', loads.load),
      ];
      source.value = 'v2';
      cache.invalidate(WS);
      gate.pass();
      await settle();
      loads.releaseAll();
      expect(await Promise.all(readers)).toEqual(['v2', 'v2', 'v2']);
      expect(loads.count()).toBe(2);
    });

    test('a load under way when it arrived, which a change made stale, is not shared', async () => {
      const gate = heldBarrier();
      const cache = new ReadCache(gate.barrier);
      const source = { value: 'a' };
      const loads = slowLoads(source);
      const options = { touches: () => (computerId: string) => computerId === 'mine' };
      // One load under way; a change of another computer makes it stale but still stored, and a reader
      // arriving then begins a second load: an entry and a load of the same key, side by side.
      const storing = cache.get(WS, 'k', loads.load, options);
      await settle();
      cache.invalidate(WS, 'other');
      const loading = cache.get(WS, 'k', loads.load, options);
      await settle();
      loads.release();
      expect(await storing).toBe('a');
      // A hit now finds the entry, with the second load under way; a change of its computer while
      // the barrier runs drops the entry and makes that load stale: it must read again.
      gate.close();
      const reader = cache.get(WS, 'k', loads.load, options);
      source.value = 'b';
      cache.invalidate(WS, 'mine');
      gate.pass();
      await settle();
      loads.releaseAll();
      expect(await loading).toBe('a');
      expect(await reader).toBe('b');
      expect(loads.count()).toBe(3);
    });
  });

  test('switched off (SVC_READ_CACHE=off), every read loads and nothing is kept', async () => {
    const cache = new ReadCache(async () => {}, { enabled: false });
    const source = { value: 'a' };
    const { calls, load } = loader(source);
    await cache.get(WS, 'k', load);
    await cache.get(WS, 'k', load);
    expect(calls.n).toBe(2);
    expect(cache.rows).toBe(0);
  });
});
