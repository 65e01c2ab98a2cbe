import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import {
  type PlacementHost,
  type PlacementPolicy,
  type PlacementRequest,
  placeComputer,
  shortOf,
} from '../../src/fleet/placement.js';
import { RESOURCES, type Resources } from '../../src/platform/resources.js';

const CAPACITY: Resources = { vcpus: 64, memory_mib: 262_144, computers: 500 };
const SMALL = { vcpus: 2, memory_mib: 4096 };
const MEDIUM = { vcpus: 4, memory_mib: 16_384 };
const LARGE = { vcpus: 8, memory_mib: 32_768 };

function host(id: string, used: Partial<Resources> = {}, extra: Partial<PlacementHost> = {}): PlacementHost {
  return {
    id,
    labels: {},
    capacity: CAPACITY,
    used: { vcpus: 0, memory_mib: 0, computers: 0, ...used },
    state: 'healthy',
    ...extra,
  };
}

function placedId(hosts: PlacementHost[], request: PlacementRequest, policy: PlacementPolicy = 'spread') {
  const result = placeComputer(hosts, request, { policy });
  if (!result.placed) throw new Error(`expected a placement, got ${result.reason}: ${result.message}`);
  return result.host.id;
}

describe('fits or not, per resource', () => {
  test.each([
    ['fits with room to spare', { vcpus: 10 }, []],
    ['fits exactly (used + need = capacity)', { vcpus: 56, memory_mib: 229_376, computers: 499 }, []],
    ['one vCPU short', { vcpus: 57 }, ['vcpus']],
    ['one MiB short', { memory_mib: 229_377 }, ['memory_mib']],
    ['no computer slot left', { computers: 500 }, ['computers']],
    [
      'short of all three',
      { vcpus: 60, memory_mib: 250_000, computers: 500 },
      ['vcpus', 'memory_mib', 'computers'],
    ],
  ] as const)('a large on a host with %s', (_name, used, want) => {
    const h = host('h1', used);
    expect(shortOf(h, LARGE)).toEqual(want);
    const result = placeComputer([h], LARGE, { policy: 'spread' });
    expect(result.placed).toBe(want.length === 0);
  });

  test.each([
    ['vcpus', { vcpus: 60 }, 'no room for 8 vCPUs on any of 2 matching hosts (at most 4 vCPUs free on one)'],
    [
      'memory_mib',
      { memory_mib: 240_000 },
      'no room for 32768 MiB of memory on any of 2 matching hosts (at most 22144 MiB of memory free on one)',
    ],
    [
      'computers',
      { computers: 500 },
      'no room for 1 computer slots on any of 2 matching hosts (at most 0 computer slots free on one)',
    ],
  ] as const)('no room anywhere names the short resource: %s', (resource, used, message) => {
    const result = placeComputer([host('h1', used), host('h2', used)], LARGE, { policy: 'pack' });
    expect(result).toMatchObject({
      placed: false,
      reason: 'insufficient_capacity',
      resource,
      hosts: { total: 2, healthy: 2, matching: 2 },
      message,
    });
    if (result.placed) return;
    for (const r of RESOURCES) expect(result.shortHosts[r]).toBe(r === resource ? 2 : 0);
  });

  test('the resource named is the one the most hosts were short of', () => {
    const hosts = [
      host('h1', { vcpus: 60 }),
      host('h2', { memory_mib: 240_000 }),
      host('h3', { memory_mib: 240_000 }),
    ];
    const result = placeComputer(hosts, LARGE, { policy: 'spread' });
    expect(result).toMatchObject({
      placed: false,
      resource: 'memory_mib',
      shortHosts: { vcpus: 1, memory_mib: 2 },
    });
    expect(result.placed || result.largestFree).toEqual({ vcpus: 64, memory_mib: 262_144, computers: 500 });
  });

  test('a host over its capacity (capacity lowered under it) takes nothing', () => {
    const result = placeComputer([host('h1', { vcpus: 70 })], SMALL, { policy: 'spread' });
    expect(result).toMatchObject({ placed: false, reason: 'insufficient_capacity', resource: 'vcpus' });
  });

  test.each([
    ['negative vCPUs', { vcpus: -1, memory_mib: 1 }],
    ['fractional memory', { vcpus: 1, memory_mib: 0.5 }],
    ['NaN', { vcpus: Number.NaN, memory_mib: 1 }],
  ])('a request with %s is a programming error', (_name, request) => {
    expect(() => placeComputer([host('h1')], request, { policy: 'spread' })).toThrow(RangeError);
  });
});

describe('host states and labels', () => {
  test('unhealthy and cordoned hosts are never chosen, however empty', () => {
    const hosts = [
      host('a-empty-unhealthy', {}, { state: 'unhealthy' }),
      host('b-empty-cordoned', {}, { state: 'cordoned' }),
      host('c-busy', { vcpus: 50 }),
    ];
    for (const policy of ['spread', 'pack'] as const) {
      const result = placeComputer(hosts, SMALL, { policy });
      expect(result.placed && result.candidates).toEqual(['c-busy']);
    }
  });

  test.each([
    ['no host at all', [], 'no_hosts'],
    [
      'only unhealthy and cordoned hosts',
      [host('h1', {}, { state: 'unhealthy' }), host('h2', {}, { state: 'cordoned' })],
      'no_healthy_hosts',
    ],
  ] as const)('%s', (_name, hosts, reason) => {
    expect(placeComputer(hosts, SMALL, { policy: 'spread' })).toMatchObject({ placed: false, reason });
  });

  test('required labels must all be on the host with the same value', () => {
    const hosts = [
      host('h1', {}, { labels: { zone: 'a', gpu: 'no' } }),
      host('h2', { vcpus: 40 }, { labels: { zone: 'b', gpu: 'yes' } }),
      host('h3', {}, { labels: { zone: 'b' } }),
    ];
    expect(placedId(hosts, { ...SMALL, labels: { zone: 'b', gpu: 'yes' } })).toBe('h2');
    expect(placedId(hosts, { ...SMALL, labels: { zone: 'b' } })).toBe('h3');
    expect(placeComputer(hosts, { ...SMALL, labels: { zone: 'c' } }, { policy: 'spread' })).toMatchObject({
      placed: false,
      reason: 'no_matching_hosts',
      message: 'no healthy host carries the labels zone=c',
      hosts: { total: 3, healthy: 3, matching: 0 },
    });
  });

  test('only matching hosts count towards the short resource', () => {
    const hosts = [
      host('full-a', { vcpus: 64 }, { labels: { zone: 'a' } }),
      host('empty-b', {}, { labels: { zone: 'b' } }),
    ];
    expect(placeComputer(hosts, { ...SMALL, labels: { zone: 'a' } }, { policy: 'spread' })).toMatchObject({
      placed: false,
      reason: 'insufficient_capacity',
      resource: 'vcpus',
      hosts: { matching: 1 },
      largestFree: { vcpus: 0 },
    });
  });
});

describe('spread and pack', () => {
  const hosts = [
    host('idle'),
    host('half', { vcpus: 32, memory_mib: 65_536, computers: 10 }),
    host('nearly', { vcpus: 60 }),
  ];

  test('spread takes the least loaded host, pack the most loaded that fits', () => {
    expect(placedId(hosts, SMALL, 'spread')).toBe('idle');
    expect(placedId(hosts, SMALL, 'pack')).toBe('nearly');
    // 60 + 8 > 64: pack moves on to the next most loaded.
    expect(placedId(hosts, LARGE, 'pack')).toBe('half');
  });

  test('load is the dominant share: memory-heavy counts as loaded even with idle vCPUs', () => {
    const memoryHeavy = host('memory-heavy', { vcpus: 2, memory_mib: 196_608 }); // 75 % of memory
    const cpuMedium = host('cpu-medium', { vcpus: 32, memory_mib: 0 }); // 50 % of vCPUs
    expect(placedId([memoryHeavy, cpuMedium], SMALL, 'spread')).toBe('cpu-medium');
    expect(placedId([memoryHeavy, cpuMedium], SMALL, 'pack')).toBe('memory-heavy');
  });

  test('pack keeps whole hosts free for large sizes where spread fragments them', () => {
    const fleet = (): PlacementHost[] =>
      ['h1', 'h2', 'h3'].map((id) =>
        host(id, {}, { capacity: { vcpus: 16, memory_mib: 65_536, computers: 100 } }),
      );
    const largesAfterSmalls = (policy: PlacementPolicy): number => {
      const hosts = fleet();
      const fill = (request: PlacementRequest): boolean => {
        const result = placeComputer(hosts, request, { policy });
        if (!result.placed) return false;
        const h = hosts.find((x) => x.id === result.host.id) as PlacementHost;
        h.used = {
          vcpus: h.used.vcpus + request.vcpus,
          memory_mib: h.used.memory_mib + request.memory_mib,
          computers: h.used.computers + 1,
        };
        return true;
      };
      for (let i = 0; i < 12; i++) expect(fill(SMALL)).toBe(true); // 24 of 48 vCPUs
      let larges = 0;
      while (fill({ vcpus: 16, memory_mib: 65_536 })) larges++; // a whole host each
      return larges;
    };
    expect(largesAfterSmalls('pack')).toBe(1);
    expect(largesAfterSmalls('spread')).toBe(0);
  });

  test('candidates are the fitting hosts best first, at most maxCandidates', () => {
    const many = Array.from({ length: 20 }, (_, i) =>
      host(`h${String(i).padStart(2, '0')}`, { vcpus: i * 3 }),
    );
    const spread = placeComputer(many, LARGE, { policy: 'spread', maxCandidates: 4 });
    expect(spread.placed && spread.candidates).toEqual(['h00', 'h01', 'h02', 'h03']);
    // h19 (57 of 64 used) cannot take 8 more vCPUs; h18 (54) can.
    const pack = placeComputer(many, LARGE, { policy: 'pack', maxCandidates: 3 });
    expect(pack.placed && pack.candidates).toEqual(['h18', 'h17', 'h16']);
    expect(pack.placed && pack.host.id).toBe(pack.placed && pack.candidates[0]);
  });
});

describe('determinism', () => {
  test('ties go to the smallest id in byte order, whatever the input order', () => {
    const hosts = [host('b'), host('a'), host('C'), host('a2')];
    for (const policy of ['spread', 'pack'] as const) {
      for (const order of [
        hosts,
        [...hosts].reverse(),
        [hosts[2], hosts[0], hosts[3], hosts[1]] as PlacementHost[],
      ]) {
        const result = placeComputer(order, SMALL, { policy });
        // Upper case sorts before lower case in byte order ('C' < 'a').
        expect(result.placed && result.candidates).toEqual(['C', 'a', 'a2', 'b']);
      }
    }
  });

  test('a shuffled fleet gives the same candidates (randomized)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.nat({ max: 64 }), { minLength: 1, maxLength: 30 }),
        fc.integer(),
        (loads, seed) => {
          const hosts = loads.map((vcpus, i) => host(`h${i}`, { vcpus, memory_mib: vcpus * 1024 }));
          const shuffled = shuffle(hosts, seed);
          for (const policy of ['spread', 'pack'] as const) {
            expect(placeComputer(shuffled, MEDIUM, { policy })).toEqual(
              placeComputer(hosts, MEDIUM, { policy }),
            );
          }
        },
      ),
    );
  });
});

describe('anti-affinity across a label', () => {
  const zones = [
    host('a1', { vcpus: 40 }, { labels: { zone: 'a' } }),
    host('b1', { vcpus: 10 }, { labels: { zone: 'b' } }),
    host('c1', { vcpus: 50 }, { labels: { zone: 'c' } }),
    host('none'),
  ];

  test('prefers the zone holding the fewest of the group, then the policy within it', () => {
    const request = (placed: Record<string, number>): PlacementRequest => ({
      ...SMALL,
      antiAffinity: { label: 'zone', placed },
    });
    // The workspace has computers in a and b, none in c or without a zone: c1 and 'none' tie on 0;
    // spread takes the emptier ('none'), pack the fuller (c1).
    expect(placedId(zones, request({ a: 2, b: 1, '': 1 }))).toBe('c1');
    expect(placedId(zones, request({ a: 2, b: 1 }), 'spread')).toBe('none');
    expect(placedId(zones, request({ a: 2, b: 1 }), 'pack')).toBe('c1');
    expect(placedId(zones, request({ a: 0, b: 3, c: 3, '': 3 }), 'spread')).toBe('a1');
  });

  test('it orders, never refuses: a full preferred zone yields to the next', () => {
    const full = zones.map((h) => (h.id === 'c1' ? host('c1', { vcpus: 64 }, { labels: { zone: 'c' } }) : h));
    expect(placedId(full, { ...SMALL, antiAffinity: { label: 'zone', placed: { a: 2, b: 1, '': 2 } } })).toBe(
      'b1',
    );
  });
});

describe('never past capacity (randomized)', () => {
  const sizes = [SMALL, MEDIUM, LARGE];
  const arbitraryHost = fc.record({
    capacity: fc.record({
      vcpus: fc.nat({ max: 64 }),
      memory_mib: fc.nat({ max: 131_072 }),
      computers: fc.nat({ max: 20 }),
    }),
    state: fc.constantFrom('healthy', 'healthy', 'healthy', 'unhealthy', 'cordoned'),
    zone: fc.constantFrom('a', 'b', 'c'),
  });
  const step = fc.oneof(
    fc.record({
      kind: fc.constant('place' as const),
      size: fc.nat({ max: 2 }),
      zone: fc.option(fc.constantFrom('a', 'b', 'c'), { nil: undefined }),
    }),
    fc.record({ kind: fc.constant('delete' as const), pick: fc.nat() }),
  );

  test.each(['spread', 'pack'] as const)(
    '%s: every placement fits, and "no room" means none fits',
    (policy) => {
      fc.assert(
        fc.property(
          fc.array(arbitraryHost, { minLength: 0, maxLength: 12 }),
          fc.array(step, { maxLength: 200 }),
          (specs, steps) => {
            const hosts: PlacementHost[] = specs.map((s, i) => ({
              id: `h${i}`,
              labels: { zone: s.zone },
              capacity: s.capacity,
              used: { vcpus: 0, memory_mib: 0, computers: 0 },
              state: s.state,
            }));
            const live: { host: PlacementHost; vcpus: number; memory_mib: number }[] = [];
            for (const s of steps) {
              if (s.kind === 'delete') {
                if (live.length === 0) continue;
                const [gone] = live.splice(s.pick % live.length, 1);
                if (!gone) continue;
                const h = gone.host;
                h.used = {
                  vcpus: h.used.vcpus - gone.vcpus,
                  memory_mib: h.used.memory_mib - gone.memory_mib,
                  computers: h.used.computers - 1,
                };
                continue;
              }
              const size = sizes[s.size] as typeof SMALL;
              const request: PlacementRequest = { ...size, ...(s.zone ? { labels: { zone: s.zone } } : {}) };
              const result = placeComputer(hosts, request, { policy });
              if (!result.placed) {
                const anyFits = hosts.some(
                  (h) =>
                    h.state === 'healthy' &&
                    (!s.zone || h.labels.zone === s.zone) &&
                    shortOf(h, request).length === 0,
                );
                expect(anyFits).toBe(false);
                continue;
              }
              const h = result.host;
              expect(h.state).toBe('healthy');
              if (s.zone) expect(h.labels.zone).toBe(s.zone);
              h.used = {
                vcpus: h.used.vcpus + size.vcpus,
                memory_mib: h.used.memory_mib + size.memory_mib,
                computers: h.used.computers + 1,
              };
              for (const r of RESOURCES) expect(h.used[r]).toBeLessThanOrEqual(h.capacity[r]);
              live.push({ host: h, ...size });
            }
          },
        ),
        { numRuns: 300 },
      );
    },
  );
});

/** A deterministic Fisher–Yates shuffle (the seed makes a failing run repeatable). */
function shuffle<T>(items: readonly T[], seed: number): T[] {
  const out = [...items];
  let state = seed >>> 0 || 1;
  for (let i = out.length - 1; i > 0; i--) {
    state = (state * 1_103_515_245 + 12_345) >>> 0;
    const j = state % (i + 1);
    [out[i], out[j]] = [out[j] as T, out[i] as T];
  }
  return out;
}
