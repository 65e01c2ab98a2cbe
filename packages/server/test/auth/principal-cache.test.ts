import { describe, expect, it } from 'vitest';
import type { Membership, Principal } from '../../src/identity/auth/authenticate.js';
import { PrincipalCache } from '../../src/identity/auth/principal-cache.js';

const member = (workspaceId: string): Membership => ({
  workspace: {
    id: workspaceId,
    name: workspaceId,
    display_name: '',
    created_by: 'x',
    created_at: new Date(0),
    updated_at: new Date(0),
  },
  role: 'viewer',
});

const who = (id: string, version: string, workspaces: string[] = []): Principal => ({
  id,
  kind: 'user',
  name: version,
  display_name: version,
  email: null,
  memberships: workspaces.map(member),
  membershipsComplete: true,
});

describe('PrincipalCache', () => {
  it('answers from memory per principal and key, and drops only what a notification names', async () => {
    const cache = new PrincipalCache();
    let loads = 0;
    const load =
      (id: string, workspaces: string[] = []) =>
      async () =>
        who(id, `v${++loads}`, workspaces);
    expect((await cache.get('a', 'k1', load('a', ['w1']))).name).toBe('v1');
    expect((await cache.get('a', 'k1', load('a'))).name).toBe('v1');
    expect((await cache.get('a', 'k2', load('a'))).name).toBe('v2'); // another key: its own entry
    expect((await cache.get('b', undefined, load('b', ['w2']))).name).toBe('v3');
    expect(cache.size).toBe(3);

    cache.notified('p:a'); // a key of a, or a membership of a, changed
    expect(cache.size).toBe(1);
    expect((await cache.get('b', undefined, load('b'))).name).toBe('v3');
    expect((await cache.get('a', 'k1', load('a', ['w1']))).name).toBe('v4');

    cache.notified('w:w2'); // b's workspace was renamed: only b goes
    expect((await cache.get('a', 'k1', load('a'))).name).toBe('v4');
    expect((await cache.get('b', undefined, load('b'))).name).toBe('v5');

    cache.notified('something else');
    expect(cache.size).toBe(0);
  });

  it('does not store a read that raced an invalidation of what it read', async () => {
    const cache = new PrincipalCache();
    let release: () => void = () => {};
    const slow = cache.get(
      'a',
      undefined,
      () => new Promise<Principal>((resolve) => (release = () => resolve(who('a', 'stale', ['w1'])))),
    );
    cache.invalidateWorkspace('w1'); // a write commits while the read is in flight
    release();
    expect((await slow).name).toBe('stale');
    expect((await cache.get('a', undefined, async () => who('a', 'fresh'))).name).toBe('fresh');
  });

  it('stores a read when the invalidation meanwhile concerned someone else', async () => {
    const cache = new PrincipalCache();
    let release: () => void = () => {};
    const slow = cache.get(
      'a',
      undefined,
      () => new Promise<Principal>((resolve) => (release = () => resolve(who('a', 'kept', ['w1'])))),
    );
    cache.invalidatePrincipal('b');
    cache.invalidateWorkspace('w9');
    release();
    await slow;
    expect((await cache.get('a', undefined, async () => who('a', 'reloaded'))).name).toBe('kept');
  });

  it('never caches a refusal, entries age out after the TTL, and clear() forgets all', async () => {
    let now = 0;
    const cache = new PrincipalCache({ ttlMs: 1000, now: () => now });
    await expect(cache.get('a', undefined, () => Promise.reject(new Error('revoked')))).rejects.toThrow(
      'revoked',
    );
    expect((await cache.get('a', undefined, async () => who('a', 'one'))).name).toBe('one');
    now = 999;
    expect((await cache.get('a', undefined, async () => who('a', 'two'))).name).toBe('one');
    now = 1000;
    expect((await cache.get('a', undefined, async () => who('a', 'three'))).name).toBe('three');
    cache.clear();
    expect((await cache.get('a', undefined, async () => who('a', 'four'))).name).toBe('four');
  });
});
