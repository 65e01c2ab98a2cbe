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

/** A JSON path as Spectral's override pointers write it: RFC 6901 escapes, `{` `}` percent-encoded. */
const pathToPointer = (path: string[]) =>
  `#/${path.map((s) => s.replaceAll('~', '~0').replaceAll('/', '~1').replaceAll('{', '%7B').replaceAll('}', '%7D')).join('/')}`;

describe('the OWASP string-limit exemption of byte bodies (spectral.yaml `overrides`)', () => {
  it("names exactly the schemas of the bundle's byte responses (rules/lib/bytes.js), no more, no fewer", async () => {
    const { parse } = await import('yaml');
    const { byteBodies } = await import('./lib/bytes.js');
    const ruleset = parse(readFileSync(new URL('./spectral.yaml', import.meta.url), 'utf8'));
    const exempted = ruleset.overrides
      .filter((o: { rules: Record<string, string> }) => o.rules['owasp:api4:2023-string-limit'] === 'off')
      .flatMap((o: { files: string[] }) => o.files.map((f) => f.replace(/^\*#/, '#')))
      .sort();
    const bundle = JSON.parse(readFileSync(BUNDLE, 'utf8'));
    const bodies = byteBodies(bundle)
      .filter((b: { headers?: string[] }) => b.headers !== undefined)
      .map((b: { at: string[] }) => pathToPointer([...b.at, 'schema']));
    expect(bodies.length).toBeGreaterThan(0);
    expect(exempted).toEqual(bodies.sort());
  });

  it('every byte request body states its bound as maxLength, the same as its x-svc-max-bytes', async () => {
    const { byteBodies } = await import('./lib/bytes.js');
    const bundle = JSON.parse(readFileSync(BUNDLE, 'utf8'));
    const uploads = byteBodies(bundle).filter((b: { headers?: string[] }) => b.headers === undefined);
    expect(uploads.length).toBeGreaterThan(0);
    for (const upload of uploads as {
      operationId: string;
      schema: { maxLength?: number };
      maxBytes?: number;
    }[])
      expect([upload.operationId, upload.schema.maxLength]).toEqual([upload.operationId, upload.maxBytes]);
  });
});
