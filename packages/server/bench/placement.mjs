// Placement at fleet size (issue #32): a SIMULATION. No Engine, no database: simulated hosts held in
// this process, and the placement policy of `src/fleet/placement.ts` (the built dist) asked where each
// computer goes. It measures the policy's cost and what each policy does to a fleet, not a deployment.
//
// 100 hosts (by default 64 vCPUs, 256 GiB, 500 computers each, zones a, b, c in turn) take 100 000
// creates of the catalogue's sizes (migration 002: small 2 vCPUs / 4 GiB, medium 4 / 16 GiB, large
// 8 / 32 GiB) in a mix of 60 / 30 / 10 %, with deletions interleaved: before each create, each live
// computer leaves with probability 1 / target, so the live count settles near `target`, chosen so the
// computers alive at once ask for `--load` of the fleet's vCPUs. A computer is placed where the policy
// says and its size added to the host, as the conditional UPDATE would (one replica: nothing races).
// Both policies see the same sequence of creates and deletions (the same seed).
//
//   pnpm --filter @svc/server build
//   node packages/server/bench/placement.mjs [--creates 100000] [--hosts 100] [--load 0.95]
//     [--vcpus 64] [--memory-gib 256] [--slots 500] [--workspaces 0] [--seed 1]
//
// With `--workspaces N` each create belongs to one of N workspaces and asks to spread that workspace
// across zones (the soft anti-affinity of the request). Prints, per policy: placements per second (the
// calls alone), p50 / p99 of one call, utilisation per resource at the end (mean, min, max over hosts),
// how many large computers could still be placed without moving anything (fragmentation: against what
// the fleet's free total would hold), and how many creates found no room, by the resource named.
import { parseArgs } from 'node:util';
import { placeComputer } from '../dist/fleet/placement.js';

const { values } = parseArgs({
  options: {
    creates: { type: 'string', default: '100000' },
    hosts: { type: 'string', default: '100' },
    load: { type: 'string', default: '0.95' },
    vcpus: { type: 'string', default: '64' },
    'memory-gib': { type: 'string', default: '256' },
    slots: { type: 'string', default: '500' },
    workspaces: { type: 'string', default: '0' },
    seed: { type: 'string', default: '1' },
  },
});
const CREATES = Number(values.creates);
const HOSTS = Number(values.hosts);
const LOAD = Number(values.load);
const CAPACITY = {
  vcpus: Number(values.vcpus),
  memory_mib: Number(values['memory-gib']) * 1024,
  computers: Number(values.slots),
};
const WORKSPACES = Number(values.workspaces);
const SEED = Number(values.seed);
const ZONES = ['a', 'b', 'c'];

const SIZES = [
  { name: 'small', vcpus: 2, memory_mib: 4096, share: 0.6 },
  { name: 'medium', vcpus: 4, memory_mib: 16_384, share: 0.3 },
  { name: 'large', vcpus: 8, memory_mib: 32_768, share: 0.1 },
];
const LARGE = SIZES[2];
const MEAN_VCPUS = SIZES.reduce((sum, s) => sum + s.vcpus * s.share, 0);
const TARGET = Math.round((LOAD * HOSTS * CAPACITY.vcpus) / MEAN_VCPUS);

/** mulberry32: a small seeded generator, so both policies see the same requests. */
function generator(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

function pickSize(random) {
  let x = random();
  for (const size of SIZES) {
    if (x < size.share) return size;
    x -= size.share;
  }
  return SIZES[0];
}

function quantile(sorted, q) {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

function run(policy) {
  const random = generator(SEED);
  const hosts = Array.from({ length: HOSTS }, (_, i) => ({
    id: `host-${String(i).padStart(3, '0')}`,
    labels: { zone: ZONES[i % ZONES.length] },
    capacity: CAPACITY,
    used: { vcpus: 0, memory_mib: 0, computers: 0 },
    state: 'healthy',
  }));
  /** Live computers: { host, size, workspace }. Removal swaps with the last: O(1). */
  const live = [];
  const perZone = Array.from({ length: WORKSPACES }, () => ({}));
  const times = new Float64Array(CREATES);
  const noRoom = { vcpus: 0, memory_mib: 0, computers: 0 };
  let deletions = 0;
  let placed = 0;
  for (let i = 0; i < CREATES; i++) {
    // Churn: each live computer leaves with probability 1 / TARGET; drawn as a count per step.
    const expected = live.length / TARGET;
    let leaving = Math.floor(expected) + (random() < expected % 1 ? 1 : 0);
    while (leaving-- > 0 && live.length > 0) {
      const at = Math.floor(random() * live.length);
      const gone = live[at];
      live[at] = live[live.length - 1];
      live.pop();
      const h = gone.host;
      h.used = {
        vcpus: h.used.vcpus - gone.size.vcpus,
        memory_mib: h.used.memory_mib - gone.size.memory_mib,
        computers: h.used.computers - 1,
      };
      if (WORKSPACES) perZone[gone.workspace][h.labels.zone]--;
      deletions++;
    }
    const size = pickSize(random);
    const workspace = WORKSPACES ? Math.floor(random() * WORKSPACES) : -1;
    const request = { vcpus: size.vcpus, memory_mib: size.memory_mib };
    if (WORKSPACES) request.antiAffinity = { label: 'zone', placed: perZone[workspace] };
    const start = process.hrtime.bigint();
    const result = placeComputer(hosts, request, { policy });
    times[i] = Number(process.hrtime.bigint() - start);
    if (!result.placed) {
      noRoom[result.resource ?? 'computers']++;
      continue;
    }
    const h = result.host;
    h.used = {
      vcpus: h.used.vcpus + size.vcpus,
      memory_mib: h.used.memory_mib + size.memory_mib,
      computers: h.used.computers + 1,
    };
    if (WORKSPACES) {
      const zones = perZone[workspace];
      zones[h.labels.zone] = (zones[h.labels.zone] ?? 0) + 1;
    }
    live.push({ host: h, size, workspace });
    placed++;
  }
  for (const h of hosts) {
    for (const r of ['vcpus', 'memory_mib', 'computers']) {
      if (h.used[r] > h.capacity[r] || h.used[r] < 0)
        throw new Error(`${h.id} is past its ${r}: the policy is broken`);
    }
  }
  const sorted = Array.from(times).sort((a, b) => a - b);
  const totalNs = sorted.reduce((sum, t) => sum + t, 0);
  const utilisation = {};
  for (const r of ['vcpus', 'memory_mib', 'computers']) {
    const shares = hosts.map((h) => h.used[r] / h.capacity[r]);
    utilisation[r] = {
      mean: shares.reduce((s, x) => s + x, 0) / shares.length,
      min: Math.min(...shares),
      max: Math.max(...shares),
    };
  }
  const free = (h, r) => h.capacity[r] - h.used[r];
  const largesPlaceable = hosts.reduce(
    (sum, h) =>
      sum +
      Math.min(
        Math.floor(free(h, 'vcpus') / LARGE.vcpus),
        Math.floor(free(h, 'memory_mib') / LARGE.memory_mib),
        free(h, 'computers'),
      ),
    0,
  );
  const pooled = (r) => hosts.reduce((sum, h) => sum + free(h, r), 0);
  const largesIfPooled = Math.min(
    Math.floor(pooled('vcpus') / LARGE.vcpus),
    Math.floor(pooled('memory_mib') / LARGE.memory_mib),
    pooled('computers'),
  );
  const emptyHosts = hosts.filter((h) => h.used.computers === 0).length;
  return {
    policy,
    placed,
    deletions,
    live: live.length,
    perSecond: CREATES / (totalNs / 1e9),
    p50us: quantile(sorted, 0.5) / 1000,
    p99us: quantile(sorted, 0.99) / 1000,
    utilisation,
    largesPlaceable,
    largesIfPooled,
    emptyHosts,
    noRoom,
  };
}

const pct = (x) => `${(x * 100).toFixed(1)} %`.padStart(7);
console.log(
  `SIMULATED placement: ${CREATES} creates on ${HOSTS} hosts of ${CAPACITY.vcpus} vCPUs / ${CAPACITY.memory_mib / 1024} GiB / ${CAPACITY.computers} computers, zones ${ZONES.join(', ')}; sizes small/medium/large 60/30/10 %; churn to ~${TARGET} live (${LOAD * 100} % of the fleet's vCPUs asked for); ${WORKSPACES ? `${WORKSPACES} workspaces spread across zones` : 'no anti-affinity'}; seed ${SEED}; node ${process.version}`,
);
// A first pass of each policy warms the JIT, unmeasured, so neither policy pays for it alone.
for (const policy of ['spread', 'pack']) run(policy);
for (const policy of ['spread', 'pack']) {
  const r = run(policy);
  console.log(`\n${policy}`);
  console.log(
    `  ${r.placed} placed, ${r.deletions} deleted, ${r.live} live at the end; ${Math.round(r.perSecond).toLocaleString('en-US')} placements/s (the calls alone), one call p50 ${r.p50us.toFixed(1)} µs, p99 ${r.p99us.toFixed(1)} µs`,
  );
  for (const [resource, u] of Object.entries(r.utilisation)) {
    console.log(
      `  utilisation ${resource.padEnd(10)} mean ${pct(u.mean)}  min ${pct(u.min)}  max ${pct(u.max)}`,
    );
  }
  console.log(
    `  large computers still placeable: ${r.largesPlaceable} (the free total would hold ${r.largesIfPooled}); empty hosts: ${r.emptyHosts}`,
  );
  const refused = Object.values(r.noRoom).reduce((a, b) => a + b, 0);
  console.log(
    `  no room: ${refused} of ${CREATES} (${Object.entries(r.noRoom)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ')})`,
  );
}
