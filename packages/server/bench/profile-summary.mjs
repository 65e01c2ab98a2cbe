// Summarises a V8 .cpuprofile (from `node bench/run.mjs --cpu-prof <dir>`): self time by package or
// area, then the top frames by self time. `--last N` keeps only the last N seconds of samples: the
// server is stopped right after its measurement, so that leaves start-up out.
// Usage: node bench/profile-summary.mjs <file.cpuprofile> [--top 15] [--last 5]
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { top: { type: 'string', default: '15' }, last: { type: 'string' } },
});
const file = positionals[0];
if (!file) {
  process.stderr.write('usage: node bench/profile-summary.mjs <file.cpuprofile> [--top 15]\n');
  process.exit(2);
}
const profile = JSON.parse(readFileSync(file, 'utf8'));

/** Self time per node id, in ms, from the sample stream. */
const self = new Map();
const at = [];
let clock = profile.startTime;
for (const delta of profile.timeDeltas) {
  clock += delta;
  at.push(clock);
}
const from = values.last ? profile.endTime - Number(values.last) * 1e6 : -Infinity;
for (let i = 0; i < profile.samples.length; i++) {
  if ((at[i] ?? 0) < from) continue;
  const id = profile.samples[i];
  self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0) / 1000);
}
// Percentages are of busy time: `(idle)` (waiting on sockets and the database) is reported apart.
const idleIds = new Set(profile.nodes.filter((n) => n.callFrame.functionName === '(idle)').map((n) => n.id));
const sampled = [...self.values()].reduce((a, b) => a + b, 0);
const idle = [...idleIds].reduce((sum, id) => sum + (self.get(id) ?? 0), 0);
for (const id of idleIds) self.delete(id);
const total = sampled - idle;

/** Where a frame lives: a package under node_modules, node's internals, our dist, or V8 itself. */
function area({ url, functionName }) {
  if (!url) return functionName.startsWith('(') ? functionName : '(native)';
  const pkg = /node_modules\/(?:\.pnpm\/[^/]+\/node_modules\/)?((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return pkg[1];
  if (url.startsWith('node:')) return 'node internals';
  if (url.includes('/packages/'))
    return url.replace(/^.*\/packages\/([^/]+)\/(?:dist\/)?/, '@svc/$1: ').replace(/\.js$/, '');
  return url;
}

const byArea = new Map();
const byFrame = new Map();
for (const node of profile.nodes) {
  const ms = self.get(node.id) ?? 0;
  if (ms === 0) continue;
  const where = area(node.callFrame);
  const pkg = where.split(':')[0];
  byArea.set(pkg, (byArea.get(pkg) ?? 0) + ms);
  const name = `${node.callFrame.functionName || '(anonymous)'}  ${where}:${node.callFrame.lineNumber + 1}`;
  byFrame.set(name, (byFrame.get(name) ?? 0) + ms);
}
const pct = (ms) => `${((100 * ms) / total).toFixed(1).padStart(5)} %`;
const top = Number(values.top);
process.stdout.write(
  `${file}: ${(sampled / 1000).toFixed(1)} s sampled, ${((100 * idle) / sampled).toFixed(1)} % idle\n\nself time by area (share of busy time)\n`,
);
for (const [name, ms] of [...byArea].sort((a, b) => b[1] - a[1]).slice(0, top))
  process.stdout.write(`  ${pct(ms)}  ${name}\n`);
process.stdout.write('\ntop frames by self time\n');
for (const [name, ms] of [...byFrame].sort((a, b) => b[1] - a[1]).slice(0, top))
  process.stdout.write(`  ${pct(ms)}  ${name}\n`);
