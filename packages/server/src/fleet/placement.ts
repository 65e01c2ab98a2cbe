/**
 * Where a new computer goes in a fleet of Docker Engines (issue #32; docs/decisions/0015). Pure: it
 * reads the hosts it is handed and answers an ordered list of hosts to try. Taking the room is the
 * caller's (`src/fleet/place.ts`), in the create's transaction: it locks a candidate's row and counts
 * that host's live computers again under the lock (`tryHostForPlacement` in
 * `src/repositories/hosts.ts`, under a savepoint), so two replicas placing at once never overfill a
 * host. A candidate full by then is let go and the next one tried; when every one is refused, the
 * caller reads the hosts once more and places again, a bounded number of times, then answers no
 * capacity. The hosts read here may be stale; the locked count is the truth.
 */

import { RESOURCES, type Resource, type Resources } from '../platform/resources.js';

/** `healthy` takes new computers; `unhealthy` (no heartbeat) and `cordoned` (an operator's word) never do. */
export type HostState = 'healthy' | 'unhealthy' | 'cordoned';

/** A host as placement sees it: a row of the planned `hosts` table. */
export interface PlacementHost {
  id: string;
  labels: Readonly<Record<string, string>>;
  capacity: Readonly<Resources>;
  used: Readonly<Resources>;
  state: HostState;
}

/**
 * `spread`: the host least loaded by its dominant share once the computer is on it (each resource's
 * used / capacity; the largest of the three), so load stays even and a host's failure hurts least.
 * `pack`: the most loaded host that still fits (best fit by the same share), so whole hosts stay free
 * for large sizes and can be drained and retired.
 */
export type PlacementPolicy = 'spread' | 'pack';

/** What one computer needs: its size's vCPUs and memory, and one computer slot. */
export interface PlacementRequest {
  vcpus: number;
  memory_mib: number;
  /** Labels the host must carry with exactly these values (e.g. `{zone: 'b'}`). */
  labels?: Readonly<Record<string, string>>;
  /**
   * Soft anti-affinity: prefer hosts whose value of `label` holds the fewest of this group's computers
   * (e.g. `{label: 'zone', placed: {a: 3, b: 1}}` for a workspace's computers per zone); a host without
   * the label counts as the value `''`. It orders hosts, never refuses one.
   */
  antiAffinity?: { label: string; placed: Readonly<Record<string, number>> };
}

export interface PlacementOptions {
  policy: PlacementPolicy;
  /** How many hosts to answer in `candidates`, best first (default 8). */
  maxCandidates?: number;
}

/** Why nothing fits: the API's error later names `resource` (`503 unavailable`, decision 0015). */
export interface NoCapacity {
  placed: false;
  /**
   * `no_hosts`: none registered. `no_healthy_hosts`: every host unhealthy or cordoned.
   * `no_matching_hosts`: no healthy host carries the required labels. `insufficient_capacity`: some
   * do, and every one is short of at least one resource.
   */
  reason: 'no_hosts' | 'no_healthy_hosts' | 'no_matching_hosts' | 'insufficient_capacity';
  /** The resource the most matching hosts were short of (`insufficient_capacity` only). */
  resource?: Resource;
  /** Per resource, how many matching healthy hosts lacked room for it (`insufficient_capacity` only). */
  shortHosts: Readonly<Record<Resource, number>>;
  /** The most free of each resource on any one matching healthy host (each may be a different host). */
  largestFree: Readonly<Resources>;
  /** How many hosts were seen, and how many of them were healthy and carried the labels. */
  hosts: { total: number; healthy: number; matching: number };
  message: string;
}

/** Where to put the computer: `host` first, then the rest of `candidates` if its conditional update is refused. */
export interface Placed {
  placed: true;
  host: PlacementHost;
  /** Host ids best first; `candidates[0] === host.id`. */
  candidates: readonly string[];
}

export type PlacementResult = Placed | NoCapacity;

/** What `request` needs of each resource. */
function need(request: PlacementRequest): Resources {
  return { vcpus: request.vcpus, memory_mib: request.memory_mib, computers: 1 };
}

/**
 * The resources `host` lacks room for to take `request` (empty: it fits), whatever its state.
 *
 * @example
 * shortOf(host, { vcpus: 8, memory_mib: 32768 }); // ['memory_mib'] when 16 GiB are free
 */
export function shortOf(host: PlacementHost, request: PlacementRequest): Resource[] {
  const wanted = need(request);
  return RESOURCES.filter((r) => host.used[r] + wanted[r] > host.capacity[r]);
}

/** Whether every required label is on the host with the same value. */
export function matchesLabels(host: PlacementHost, labels: PlacementRequest['labels']): boolean {
  if (!labels) return true;
  for (const [key, value] of Object.entries(labels)) if (host.labels[key] !== value) return false;
  return true;
}

function checkRequest(request: PlacementRequest): void {
  for (const r of ['vcpus', 'memory_mib'] as const) {
    const value = request[r];
    if (!Number.isSafeInteger(value) || value < 0) {
      throw new RangeError(`placement: ${r} must be a non-negative integer, got ${value}`);
    }
  }
}

interface Scored {
  host: PlacementHost;
  domain: number;
  dominant: number;
  total: number;
}

/** Each resource's share after placing `wanted`; a resource the host has none of counts as full. */
function score(host: PlacementHost, wanted: Resources, domain: number): Scored {
  let dominant = 0;
  let total = 0;
  for (const r of RESOURCES) {
    const share = host.capacity[r] > 0 ? (host.used[r] + wanted[r]) / host.capacity[r] : 1;
    if (share > dominant) dominant = share;
    total += share;
  }
  return { host, domain, dominant, total };
}

/** Negative when `a` is the better host: fewer of the group in its domain, then the policy, then the id. */
function compare(a: Scored, b: Scored, policy: PlacementPolicy): number {
  if (a.domain !== b.domain) return a.domain - b.domain;
  const sign = policy === 'spread' ? 1 : -1;
  if (a.dominant !== b.dominant) return sign * (a.dominant - b.dominant);
  if (a.total !== b.total) return sign * (a.total - b.total);
  // Byte order, not locale order: the same answer on every replica.
  return a.host.id < b.host.id ? -1 : a.host.id > b.host.id ? 1 : 0;
}

/**
 * Picks a host for one computer by `options.policy`, honouring the request's labels; unhealthy and
 * cordoned hosts are never chosen. Deterministic: the same hosts (in any order) and request give the
 * same answer. Costs one pass over the hosts and a sorted list of at most `maxCandidates`.
 *
 * @example
 * const result = placeComputer(hosts, { vcpus: 2, memory_mib: 4096, labels: { zone: 'a' } }, { policy: 'spread' });
 * if (result.placed) console.log(result.host.id, result.candidates);
 * else console.log(result.reason, result.resource); // e.g. 'insufficient_capacity', 'memory_mib'
 */
export function placeComputer(
  hosts: readonly PlacementHost[],
  request: PlacementRequest,
  options: PlacementOptions,
): PlacementResult {
  checkRequest(request);
  const wanted = need(request);
  const limit = Math.max(1, options.maxCandidates ?? 8);
  const best: Scored[] = [];
  const shortHosts: Record<Resource, number> = { vcpus: 0, memory_mib: 0, computers: 0 };
  const largestFree: Resources = { vcpus: 0, memory_mib: 0, computers: 0 };
  let healthy = 0;
  let matching = 0;
  for (const host of hosts) {
    if (host.state !== 'healthy') continue;
    healthy++;
    if (!matchesLabels(host, request.labels)) continue;
    matching++;
    let fits = true;
    for (const r of RESOURCES) {
      const free = host.capacity[r] - host.used[r];
      if (free > largestFree[r]) largestFree[r] = free;
      if (wanted[r] > free) {
        shortHosts[r]++;
        fits = false;
      }
    }
    if (!fits) continue;
    const domain = request.antiAffinity
      ? (request.antiAffinity.placed[host.labels[request.antiAffinity.label] ?? ''] ?? 0)
      : 0;
    const scored = score(host, wanted, domain);
    // Insertion into a short sorted list: O(hosts × maxCandidates), no sort of the whole fleet.
    let at = best.length;
    while (at > 0 && compare(scored, best[at - 1] as Scored, options.policy) < 0) at--;
    if (at < limit) {
      best.splice(at, 0, scored);
      if (best.length > limit) best.pop();
    }
  }
  const first = best[0];
  if (first) return { placed: true, host: first.host, candidates: best.map((s) => s.host.id) };
  return noCapacity(hosts.length, healthy, matching, shortHosts, largestFree, request);
}

function noCapacity(
  total: number,
  healthy: number,
  matching: number,
  shortHosts: Record<Resource, number>,
  largestFree: Resources,
  request: PlacementRequest,
): NoCapacity {
  const base = { placed: false as const, shortHosts, largestFree, hosts: { total, healthy, matching } };
  if (total === 0) return { ...base, reason: 'no_hosts', message: 'no host is registered' };
  if (healthy === 0) {
    return { ...base, reason: 'no_healthy_hosts', message: `none of ${total} hosts is healthy` };
  }
  if (matching === 0) {
    const wanted = Object.entries(request.labels ?? {})
      .map(([k, v]) => `${k}=${v}`)
      .join(', ');
    return {
      ...base,
      reason: 'no_matching_hosts',
      message: `no healthy host carries the labels ${wanted}`,
    };
  }
  let resource: Resource = RESOURCES[0];
  for (const r of RESOURCES) if (shortHosts[r] > shortHosts[resource]) resource = r;
  const wanted = need(request);
  return {
    ...base,
    reason: 'insufficient_capacity',
    resource,
    message: `no room for ${amount(resource, wanted[resource])} on any of ${matching} matching hosts (at most ${amount(resource, largestFree[resource])} free on one)`,
  };
}

function amount(resource: Resource, n: number): string {
  if (resource === 'vcpus') return `${n} vCPUs`;
  if (resource === 'memory_mib') return `${n} MiB of memory`;
  return `${n} computer slots`;
}
