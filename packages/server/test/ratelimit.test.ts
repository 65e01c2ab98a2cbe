import { describe, expect, test } from 'vitest';
import {
  DEFAULT_RATE_LIMITS,
  parseRateLimits,
  RateLimitError,
  RateLimiter,
  rateLimitHeaders,
} from '../src/ratelimit.js';

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
  const clock = (start = 60_000) => {
    let now = start;
    return { now: () => now, advance: (ms: number) => (now += ms) };
  };

  test('counts down, then refuses with 429 rate_limited, Retry-After and details', () => {
    const time = clock();
    const limiter = new RateLimiter({ principal: { quota: 3, windowSeconds: 60 } }, { now: time.now });
    expect([1, 2, 3].map(() => limiter.take('principal', 'p1')?.remaining)).toEqual([2, 1, 0]);
    const error = (() => {
      try {
        limiter.take('principal', 'p1');
      } catch (caught) {
        return caught;
      }
    })() as RateLimitError;
    expect(error).toBeInstanceOf(RateLimitError);
    expect([error.status, error.code]).toEqual([429, 'rate_limited']);
    expect(error.details).toEqual({ policy: 'principal', retry_after_seconds: 60 });
    expect(error.headers).toEqual({
      'retry-after': '60',
      'ratelimit-policy': '"principal";q=3;w=60',
      ratelimit: '"principal";r=0;t=60',
    });
    // Another key has its own budget.
    expect(limiter.take('principal', 'p2')?.remaining).toBe(2);
  });

  test('the previous window still weighs in proportionally (sliding window)', () => {
    const time = clock();
    const limiter = new RateLimiter({ principal: { quota: 10, windowSeconds: 60 } }, { now: time.now });
    for (let i = 0; i < 10; i++) limiter.take('principal', 'p');
    time.advance(60_000 + 30_000); // half-way through the next window: 5 of the previous 10 still count
    expect(limiter.take('principal', 'p')?.remaining).toBe(4);
    for (let i = 0; i < 4; i++) limiter.take('principal', 'p');
    expect(() => limiter.take('principal', 'p')).toThrow(RateLimitError);
    time.advance(6_000); // 4 of the previous window now: room for one more
    expect(limiter.take('principal', 'p')).toBeDefined();
  });

  test('refused requests are not counted', () => {
    const time = clock();
    const limiter = new RateLimiter({ principal: { quota: 1, windowSeconds: 1 } }, { now: time.now });
    limiter.take('principal', 'p');
    for (let i = 0; i < 100; i++) expect(() => limiter.take('principal', 'p')).toThrow(RateLimitError);
    time.advance(2000);
    expect(limiter.take('principal', 'p')?.remaining).toBe(0);
  });

  test('an off policy answers undefined and adds no headers', () => {
    const limiter = new RateLimiter({ principal: { quota: 1, windowSeconds: 1 } });
    expect(limiter.take('workspace_mutations', 'w')).toBeUndefined();
    expect(rateLimitHeaders([undefined])).toEqual({});
  });

  test('RateLimit-Policy lists every policy that applied; RateLimit the closest to exhaustion', () => {
    const time = clock();
    const limiter = new RateLimiter(DEFAULT_RATE_LIMITS, { now: time.now });
    time.advance(18_000);
    const headers = rateLimitHeaders([
      limiter.take('principal', 'p'),
      limiter.take('workspace_mutations', 'w'),
    ]);
    expect(headers).toEqual({
      'ratelimit-policy': '"principal";q=600;w=60, "workspace-mutations";q=120;w=60',
      ratelimit: '"workspace-mutations";r=119;t=42',
    });
  });

  test('old counters are swept once the map is full', () => {
    const time = clock();
    const limiter = new RateLimiter(
      { principal: { quota: 5, windowSeconds: 1 } },
      { now: time.now, maxKeys: 10 },
    );
    for (let i = 0; i < 10; i++) limiter.take('principal', `k${i}`);
    time.advance(5000);
    limiter.take('principal', 'new');
    expect((limiter as unknown as { counters: Map<string, unknown> }).counters.size).toBe(1);
  });
});
