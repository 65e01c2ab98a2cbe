import { describe, expect, it } from 'vitest';
import type { Principal } from '../../src/auth/authenticate.js';
import { PrincipalCache } from '../../src/auth/principal-cache.js';

const who = (name: string): Principal => ({
  id: `id-${name}`,
  kind: 'user',
  name,
  display_name: name,
  email: null,
});

describe('PrincipalCache', () => {
  it('answers from memory until a mutating request invalidates it', async () => {
    const cache = new PrincipalCache();
    let loads = 0;
    const load = async () => who(`v${++loads}`);
    expect((await cache.get('t', load)).name).toBe('v1');
    expect((await cache.get('t', load)).name).toBe('v1');
    cache.invalidate();
    expect((await cache.get('t', load)).name).toBe('v2');
    expect(loads).toBe(2);
  });

  it('does not store a read that raced a write', async () => {
    const cache = new PrincipalCache();
    let release: () => void = () => {};
    const slow = cache.get(
      't',
      () => new Promise<Principal>((resolve) => (release = () => resolve(who('stale')))),
    );
    cache.invalidate(); // a write commits while the read is in flight
    release();
    expect((await slow).name).toBe('stale');
    expect((await cache.get('t', async () => who('fresh'))).name).toBe('fresh');
  });

  it('never caches a refusal, and entries age out', async () => {
    let now = 0;
    const cache = new PrincipalCache({ ttlMs: 1000, now: () => now });
    await expect(cache.get('t', () => Promise.reject(new Error('revoked')))).rejects.toThrow('revoked');
    expect((await cache.get('t', async () => who('a'))).name).toBe('a');
    now = 999;
    expect((await cache.get('t', async () => who('b'))).name).toBe('a');
    now = 1000;
    expect((await cache.get('t', async () => who('c'))).name).toBe('c');
  });
});
