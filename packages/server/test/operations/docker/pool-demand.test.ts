// The warm pool follows demand (`PoolDemand`): each kind keeps the claims expected while one container
// is made, grows at once with a burst, and shrinks back by one per decay step when creates stop.
import { describe, expect, test } from 'vitest';
import { PoolDemand } from '../../../src/computers/docker/pool-demand.js';

const KIND = 'busybox:small';

/** A demand on a clock the test moves. */
function clocked(decayMs = 10_000) {
  let now = 1_000_000;
  const demand = new PoolDemand({ now: () => now, decayMs });
  return { demand, advance: (ms: number) => (now += ms) };
}

describe('PoolDemand', () => {
  test('no claims: nothing beyond the configured count', () => {
    const { demand } = clocked();
    expect(demand.extra(KIND)).toBe(0);
  });

  test.each([
    // [name, { every: ms between claims, lead: ms to make one, want: extra containers }]
    // A create now and then: its refill is back before the next, so nothing more is kept.
    ['one claim a second, made in 400 ms', { every: 1000, lead: 400, want: 0 }],
    ['back to back every 150 ms, made in 400 ms', { every: 150, lead: 400, want: 2 }],
    ['back to back every 150 ms, made in 1 s', { every: 150, lead: 1000, want: 6 }],
    ['every 60 ms, made in 200 ms', { every: 60, lead: 200, want: 3 }],
  ])('%s', (_name, { every, lead, want }) => {
    const { demand, advance } = clocked();
    for (let i = 0; i < 15; i++) demand.made(KIND, lead); // the estimate settles near `lead`
    for (let i = 0; i < 40; i++) {
      demand.asked(KIND);
      advance(every);
    }
    expect(demand.extra(KIND)).toBe(want);
  });

  test('grows with the first burst, before any container was measured (1 s assumed)', () => {
    const { demand, advance } = clocked();
    for (let i = 0; i < 6; i++) {
      demand.asked(KIND);
      advance(150);
    }
    // 6 claims in a window of 4 s (4 lead times of 1 s): 1.5 a second, 1 s each → 1.
    expect(demand.extra(KIND)).toBe(1);
  });

  test('decays back by one per decay step once claims stop, not at once', () => {
    const { demand, advance } = clocked(10_000);
    for (let i = 0; i < 15; i++) demand.made(KIND, 400);
    for (let i = 0; i < 40; i++) {
      demand.asked(KIND);
      advance(150);
    }
    expect(demand.extra(KIND)).toBe(2);
    advance(5_000); // the window is empty: wanted 0, but held
    expect(demand.extra(KIND)).toBe(2);
    advance(5_000);
    expect(demand.extra(KIND)).toBe(1);
    advance(9_000);
    expect(demand.extra(KIND)).toBe(1);
    advance(1_000);
    expect(demand.extra(KIND)).toBe(0);
    // Demand again: up at once.
    for (let i = 0; i < 40; i++) {
      demand.asked(KIND);
      advance(150);
    }
    expect(demand.extra(KIND)).toBe(2);
  });

  test('kinds are apart', () => {
    const { demand, advance } = clocked();
    for (let i = 0; i < 20; i++) {
      demand.asked(KIND);
      advance(100);
    }
    expect(demand.extra(KIND)).toBeGreaterThan(0);
    expect(demand.extra('debian-13:small')).toBe(0);
  });
});
