import { afterEach, describe, expect, test, vi } from 'vitest';
import {
  DEFAULT_RATE_LIMITS,
  parseRateLimits,
  RateLimitError,
  RateLimiter,
  rateLimitHeaders,
} from '../src/platform/ratelimit.js';
import { memoryCounters } from '../src/platform/ratelimit-store.js';

describe('parseRateLimits', () => {
  test.each([
    ['unset', undefined, DEFAULT_RATE_LIMITS],
    ['empty', '', DEFAULT_RATE_LIMITS],
    ['off', 'off', undefined],
    [
      'one override',
      'principal=10/1',
      { ...DEFAULT_RATE_LIMITS, principal: { quota: 10, windowSeconds: 1 } },
    ],
    [
      'both, spaced',
      ' principal = 600/60 , workspace_mutations=5/10 ',
      { principal: { quota: 600, windowSeconds: 60 }, workspace_mutations: { quota: 5, windowSeconds: 10 } },
    ],
    [
      'quota 0 turns one policy off',
      'workspace_mutations=0/60',
      { principal: DEFAULT_RATE_LIMITS.principal },
    ],
  ])('%s', (_name, spec, want) => {
    expect(parseRateLimits(spec)).toEqual(want);
  });

  test.each([['principal=10'], ['nobody=1/1'], ['principal=1/0'], ['principal=-1/60'], ['principal=1.5/60']])(
    'refuses %j',
    (spec) => {
      expect(() => parseRateLimits(spec)).toThrow();
    },
  );
});

describe('RateLimiter', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  test('counts down, then refuses with 429 rate_limited, Retry-After and details', async () => {
    vi.useFakeTimers({ now: 60_000 });
    const limiter = new RateLimiter({ principal: { quota: 3, windowSeconds: 60 } }, memoryCounters);
    const remaining = [];
    for (let i = 0; i < 3; i++) remaining.push((await limiter.take('principal', 'p1'))?.remaining);
    expect(remaining).toEqual([2, 1, 0]);
    const error = await limiter.take('principal', 'p1').then(
      () => undefined,
      (caught: unknown) => caught as RateLimitError,
    );
    expect(error).toBeInstanceOf(RateLimitError);
    expect([error?.status, error?.code]).toEqual([429, 'rate_limited']);
    expect(error?.details).toEqual({ policy: 'principal', retry_after_seconds: 60 });
    expect(error?.headers).toEqual({
      'retry-after': '60',
      'ratelimit-policy': '"principal";q=3;w=60',
      ratelimit: '"principal";r=0;t=60',
    });
    // Another key has its own budget.
    expect((await limiter.take('principal', 'p2'))?.remaining).toBe(2);
  });

  test('retrying early does not move the end of the window', async () => {
    vi.useFakeTimers({ now: 60_000 });
    const limiter = new RateLimiter({ principal: { quota: 1, windowSeconds: 2 } }, memoryCounters);
    await limiter.take('principal', 'p');
    for (let i = 0; i < 100; i++)
      await expect(limiter.take('principal', 'p')).rejects.toThrow(RateLimitError);
    vi.advanceTimersByTime(2001);
    expect((await limiter.take('principal', 'p'))?.remaining).toBe(0);
  });

  test('an off policy answers undefined and adds no headers', async () => {
    const limiter = new RateLimiter({ principal: { quota: 1, windowSeconds: 1 } }, memoryCounters);
    expect(await limiter.take('workspace_mutations', 'w')).toBeUndefined();
    expect(rateLimitHeaders([undefined])).toEqual({});
  });

  test('RateLimit-Policy lists every policy that applied; RateLimit the closest to exhaustion', async () => {
    const limiter = new RateLimiter(DEFAULT_RATE_LIMITS, memoryCounters);
    const principal = await limiter.take('principal', 'p');
    const mutations = await limiter.take('workspace_mutations', 'w');
    expect(rateLimitHeaders([principal, mutations])).toEqual({
      'ratelimit-policy': '"principal";q=600;w=60, "workspace-mutations";q=120;w=60',
      ratelimit: '"workspace-mutations";r=119;t=60',
    });
  });
});
