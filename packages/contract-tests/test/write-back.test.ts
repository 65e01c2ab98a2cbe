// The write-back plan (support/write-back.ts) must be able to fail: a server that ignores or changes a
// field must be caught, and the plan must follow the spec rather than a list.
import { describe, expect, it } from 'vitest';
import { validatorAt } from '../src/validate.js';
import { REFERENCES } from './suites/write-back.js';
import { OPERATIONS } from './support/spec-index.js';
import { buildBody, unechoed, writeCases } from './support/write-back.js';

const { cases, notApplicable } = writeCases();
const byId = new Map(cases.map((c) => [c.op.operationId, c]));
// The suite's REFERENCES read fixtures of a run; these stand in for them with example values.
const references = {
  size: () => 'medium',
  image: () => 'ubuntu-2404',
  principal_id: () => '01m6hxnz3nys41pjh1sacmtn86c',
  lifetime: () => ({
    idle_timeout_seconds: 1800,
    expires_at: new Date(Date.now() + 86_400_000).toISOString(),
  }),
  lifetime_defaults: () => ({ idle_timeout_seconds: 3600, on_end: 'delete' }),
  url: () => 'http://127.0.0.1:9/write-back/1',
  event_types: () => ['computer.created'],
  computer: () => 'build-runner-1',
};

describe('unechoed: what a resource does not return of what was written', () => {
  const written = { name: 'web-1', labels: { team: 'web' }, expires_at: '2027-01-01T00:00:00Z' };
  const resource = { id: '01m6cnenctgek8472bc9m7jfnzd', ...written };

  it('is empty when every field comes back (a timestamp may come back with fractions)', () => {
    expect(unechoed(written, resource)).toEqual([]);
    expect(unechoed(written, { ...resource, expires_at: '2027-01-01T00:00:00.000Z' })).toEqual([]);
  });

  it('names a field the server ignored (absent, or left at another value)', () => {
    const { labels: _dropped, ...withoutLabels } = resource;
    expect(unechoed(written, withoutLabels)).toEqual(['labels: sent {"team":"web"}, absent']);
    expect(unechoed(written, { ...resource, name: 'web-0' })).toEqual(['name: sent "web-1", got "web-0"']);
    expect(unechoed(written, { ...resource, labels: {} })).toEqual(['labels: sent {"team":"web"}, got {}']);
    expect(unechoed(written, { ...resource, expires_at: '2027-01-01T00:00:01Z' })).toHaveLength(1);
  });

  it('compares an object with declared properties on those only; a map whole', () => {
    const lifetime = { idle_timeout_seconds: 1800, on_end: 'stop' };
    const keys = { lifetime: ['idle_timeout_seconds', 'expires_at', 'on_end'] };
    const answer = { lifetime: { ...lifetime, last_active_at: '2027-01-01T00:00:00Z' } };
    expect(unechoed({ lifetime }, answer, keys)).toEqual([]);
    expect(unechoed({ lifetime }, answer)).toHaveLength(1);
    expect(unechoed({ lifetime }, { lifetime: { ...answer.lifetime, on_end: 'delete' } }, keys)).toHaveLength(
      1,
    );
    // A declared key the request left out must not come back set (it was not asked for).
    expect(
      unechoed({ lifetime }, { lifetime: { ...answer.lifetime, expires_at: '2027-01-01T00:00:00Z' } }, keys),
    ).toHaveLength(1);
    expect(unechoed({ labels: { a: 'b' } }, { labels: { a: 'b', c: 'd' } })).toHaveLength(1);
  });

  it('names a missing resource', () => {
    expect(unechoed(written, undefined)).toEqual(['no resource in the answer: undefined']);
  });
});

describe('writeCases: generated from the spec', () => {
  it('plans every create and update with a JSON body, or says why not', () => {
    const withBody = OPERATIONS.filter(
      (op) => ['post', 'patch', 'put'].includes(op.method) && op.operation.requestBody !== undefined,
    ).map((op) => op.operationId);
    const planned = [...cases.map((c) => c.op.operationId), ...notApplicable.map((n) => n.op.operationId)];
    expect(planned.sort()).toEqual([...withBody].sort());
    for (const skipped of notApplicable) expect(skipped.reason).not.toBe('');
    expect(cases.length).toBeGreaterThan(0);
  });

  it('orders the cases so that every path parameter names a resource created before', () => {
    const created = new Set<string>();
    for (const c of cases) {
      const params = [...c.op.path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]);
      for (const param of params) expect(created, `${c.op.operationId} needs {${param}}`).toContain(param);
      if (c.kind === 'create') created.add(c.param);
    }
  });

  it('reads a resource without a GET of its own from its collection list (keys)', () => {
    const key = byId.get('createKey');
    expect(key?.read.list).toBe(true);
    expect(key?.read.op.operationId).toBe('listKeys');
    expect(byId.get('createComputer')?.read.op.operationId).toBe('getComputer');
  });

  it('every reference of the suite names a writable field of some write', () => {
    expect(Object.keys(references)).toEqual(Object.keys(REFERENCES));
    const writable = new Set(cases.flatMap((c) => c.fields));
    for (const field of Object.keys(REFERENCES)) expect(writable, `REFERENCES.${field}`).toContain(field);
  });
});

describe('buildBody: every writable field, valid for its schema', () => {
  it.each(cases.map((c) => [c.op.operationId, c] as const))('%s', (_id, writeCase) => {
    const { body, sources } = buildBody(writeCase, { references });
    expect(Object.keys(body)).toEqual(writeCase.fields);
    for (const [field, value] of Object.entries(body)) {
      const validate = validatorAt(`${writeCase.bodyPointer}/properties/${field}`);
      expect(validate(value), `${field} = ${JSON.stringify(value)}`).toBe(true);
      expect(sources[field]).toBeDefined();
    }
  });

  it('prefers a value other than the default, so a server that ignores the field is caught', () => {
    const { body } = buildBody(byId.get('createKey')!, { references });
    expect(body.algorithm).toBe('ES256'); // CreateKeyRequest.algorithm defaults to EdDSA
  });

  it('sends an update only values that differ from the current ones', () => {
    const update = byId.get('updateServiceAccount')!;
    const current = { name: 'ci', display_name: 'CI', role: 'owner' };
    const { body } = buildBody(update, { references, current });
    for (const field of update.fields)
      expect(body[field]).not.toEqual(current[field as keyof typeof current]);
  });

  it('uses the example first when given one (the mock: its response example echoes it)', () => {
    const create = byId.get('createComputer')!;
    const { body, sources } = buildBody(create, { references, example: create.example });
    // The example sets no lifetime (its expiry could not stay ahead of the clock): the run gives one.
    // Nor a screen (its image has no display): one is made from the schema.
    const { lifetime, screen, ...fromExample } = body;
    expect(fromExample).toEqual(create.example);
    expect(lifetime).toBeDefined();
    expect(screen).toBeDefined();
    const { lifetime: lifetimeSource, screen: screenSource, ...exampleSources } = sources;
    expect(new Set(Object.values(exampleSources))).toEqual(new Set(['example']));
    expect(lifetimeSource).toBe('reference');
    expect(screenSource).toBe('synthesized');
  });
});
