// The fuzz arbitraries themselves: a map schema written with `patternProperties` (Labels) must yield
// entries, not only `{}`, so label keys and values are fuzzed. Ajv (2020-12) is the oracle of validity.
import { loadDocument } from '@svc/contract';
import { Ajv2020 } from 'ajv/dist/2020.js';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { invalidValue, resolver, validValue } from './support/schema-arbitrary.js';

const document = loadDocument();
const resolve = resolver(document);
const labels = { $ref: '#/components/schemas/Labels' };
const ajv = new Ajv2020({ strict: false });
ajv.addSchema(document as object, 'doc');
const isLabels = ajv.compile({ $ref: 'doc#/components/schemas/Labels' });

describe('the fuzz arbitrary of a patternProperties map (Labels)', () => {
  it('generates valid maps, most of them with entries', () => {
    const samples = fc.sample(validValue(labels, resolve), { numRuns: 100, seed: 12 }) as object[];
    const invalid = samples.filter((value) => !isLabels(value));
    expect(invalid).toEqual([]);
    const withEntries = samples.filter((value) => Object.keys(value).length > 0);
    expect(withEntries.length).toBeGreaterThan(50);
  });

  it('breaks maps by their keys and their values', () => {
    const kinds = new Set(
      fc.sample(invalidValue(labels, resolve), { numRuns: 300, seed: 12 }).map((m) => m.kind),
    );
    expect([...kinds]).toEqual(expect.arrayContaining(['too-many-entries', 'bad-key', 'bad-entry']));
  });
});
