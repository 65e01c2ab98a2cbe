#!/usr/bin/env node
// Agent Readiness gate: `redocly score` only reports, so this fails the build below a minimum.
//
//   node tools/spec-score.mjs [bundle=spec/dist/openapi.json] [--min 95]
//
// Exit codes: 0 at or above the minimum, 1 below it, 2 the score could not be computed.
import { existsSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { runRedocly } from './redocly.mjs';

const DEFAULT_BUNDLE = fileURLToPath(new URL('../spec/dist/openapi.json', import.meta.url));
const SHOWN_HOTSPOTS = 10;

const percent = (ratio) => `${Math.round(ratio * 1000) / 10}%`;

function main() {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: { min: { type: 'string', default: '95' } },
  });
  const minimum = Number(values.min);
  if (!Number.isFinite(minimum)) throw new Error(`--min must be a number, got "${values.min}"`);
  const bundle = positionals[0] ? resolve(positionals[0]) : DEFAULT_BUNDLE;
  if (!existsSync(bundle)) throw new Error(`${bundle} is missing: bundle the spec first (pnpm spec:bundle)`);

  // The bundle sits in spec/dist, so Redocly finds spec/redocly.yaml from the bundle's parent.
  const run = runRedocly(['score', bundle, '--format', 'json'], { cwd: dirname(dirname(bundle)) });
  if (run.status !== 0) throw new Error(`redocly score exited ${run.status}:\n${run.stderr}`);
  const score = JSON.parse(run.stdout);
  if (typeof score.agentReadiness !== 'number')
    throw new Error('redocly score printed no agentReadiness figure');

  const below = Object.entries(score.subscores).filter(([, ratio]) => ratio < 1);
  console.log(`Agent Readiness: ${score.agentReadiness}/100 (minimum ${minimum})`);
  for (const [name, ratio] of below) console.log(`  ${name}: ${percent(ratio)}`);
  const hotspots = score.hotspots ?? [];
  if (hotspots.length > 0) console.log(`Lowest-scoring operations (${hotspots.length}):`);
  for (const spot of hotspots.slice(0, SHOWN_HOTSPOTS)) {
    console.log(
      `  ${spot.agentReadinessScore}  ${spot.method.toUpperCase()} ${spot.path} (${spot.operationId})`,
    );
    for (const reason of spot.reasons) console.log(`      - ${reason}`);
  }
  if (score.agentReadiness >= minimum) return 0;
  console.error(`spec-score: Agent Readiness ${score.agentReadiness} is below ${minimum}.`);
  return 1;
}

try {
  process.exitCode = main();
} catch (error) {
  console.error(`spec-score: ${error.message}`);
  process.exitCode = 2;
}
