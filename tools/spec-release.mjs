#!/usr/bin/env node
// `pnpm spec:release`: records the working tree's contract as the last released one.
//
// Writes the bundle of spec/ (as `redocly bundle` makes it with spec/redocly.yaml) to
// spec/released/v1.json, which the breaking-change gate compares main with, and empties the
// `accepted:` list of spec/breaking-changes.yaml: its reasons belonged to this release (they are
// printed here, and are in reports/spec-diff.md for the release notes). Run it on main when a
// release is cut, after `pnpm changeset version`, and commit both files.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundleSpec } from './spec-bundle.mjs';
import { ACCEPTED, RELEASED, readAccepted } from './spec-diff.mjs';

/** The text of an empty spec/breaking-changes.yaml: what the file is for, and an empty list. */
export const EMPTY_ACCEPTED = `# Deliberate breaking changes to the v1 contract since the last release (spec/released/v1.json).
#
# The breaking-change gate (pnpm spec:diff, run by pnpm test) fails on a breaking change unless an
# entry here names it and says why it is acceptable; reports/spec-diff.md shows the reason next to the
# change. The policy, and what counts as breaking, is docs/compatibility.md. \`pnpm spec:release\`
# empties the list when the release that carries the changes is cut.
#
# accepted:
#   - change: response-field-removed          # the kind printed by the gate
#     operation: GET /workspaces/{workspace}  # optional: only this operation (else every one it reaches)
#     where: legacy_name                      # optional: text of the change's message or place
#     reason: Never returned since 2026-01; every client of the beta was asked to stop reading it.
accepted: []
`;

/**
 * Writes the release snapshot and resets the recorded breaking changes.
 * @param {string} root repository root
 * @returns {{ version: string, cleared: { change: string, reason: string }[] }}
 */
export function release(root) {
  const work = mkdtempSync(join(tmpdir(), 'spec-release-'));
  try {
    const bundle = bundleSpec(join(root, 'spec'), join(work, 'v1.json'));
    const target = join(root, RELEASED);
    mkdirSync(dirname(target), { recursive: true });
    writeFileSync(target, `${JSON.stringify(bundle, null, 2)}\n`);
    const cleared = readAccepted(join(root, ACCEPTED));
    writeFileSync(join(root, ACCEPTED), EMPTY_ACCEPTED);
    return { version: bundle.info?.version ?? 'unknown', cleared };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const root = resolve(fileURLToPath(new URL('..', import.meta.url)));
  try {
    const { version, cleared } = release(root);
    console.log(`spec-release: wrote ${RELEASED} (info.version ${version}); commit it.`);
    for (const entry of cleared)
      console.log(`spec-release: released breaking change ${entry.change}: ${entry.reason.trim()}`);
    if (cleared.length) console.log(`spec-release: emptied ${ACCEPTED}.`);
  } catch (error) {
    console.error(`spec-release: ${error instanceof Error ? error.message : error}`);
    process.exitCode = 2;
  }
}
