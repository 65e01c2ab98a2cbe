import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { type Finding, lint } from './spectral.js';

// The real contract, as bundled by `redocly bundle` (the build step). Not skipped when missing:
// a test run that did not build first must fail loudly, not pass on nothing.
const BUNDLE = fileURLToPath(new URL('../dist/openapi.json', import.meta.url));

const show = (findings: Finding[]) => findings.map((f) => `${f.code} at ${f.path.join(' > ')}: ${f.message}`);

describe('the bundled spec (dist/openapi.json)', () => {
  it('has no error and no svc-* finding under the full ruleset', async () => {
    if (!existsSync(BUNDLE)) {
      throw new Error(`${BUNDLE} does not exist. Build the bundle first: pnpm --filter @svc/spec build`);
    }
    const findings = await lint(readFileSync(BUNDLE, 'utf8'), BUNDLE);
    const errors = findings.filter((f) => f.severity === 0);
    const conventions = findings.filter((f) => f.code.startsWith('svc-'));
    expect(show(errors), 'errors').toEqual([]);
    expect(show(conventions), 'svc-* findings').toEqual([]);
  });
});
