// The mock never lies: every operation, called with the spec's own example request, answers in both of
// `pnpm mock`'s modes (examples, and `--dynamic` generated data) with a status, headers and a body that
// the bundle accepts (JSON Schema 2020-12, ajv). Examples must also keep the conventions the schema does
// not state (paging pairs, 202 `Retry-After: 1`); generated data is held to the schema only. Runs in the
// default (mock) run only.
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type PrismMock, startPrism } from '../src/prism.js';
import { EXAMPLE_REQUESTS, headerViolations } from './support/mock-requests.js';
import { document, OPERATIONS } from './support/spec-index.js';
import { responseViolations } from './support/validate.js';

const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default;
const ajv = new Ajv2020({ allErrors: true, strict: false });
addFormats(ajv);
ajv.addSchema(document as object, 'https://svc.invalid/headers.json');

function validateHeader(schema: Record<string, unknown>, value: unknown): string | undefined {
  const check = ajv.compile({ ...schema, $id: undefined });
  return check(value) ? undefined : ajv.errorsText(check.errors);
}

/** How many times each operation is called in dynamic mode: every call draws new data. */
const DYNAMIC_ROUNDS = 5;

describe.each([
  { mode: 'examples', dynamic: false, rounds: 1 },
  { mode: 'dynamic', dynamic: true, rounds: DYNAMIC_ROUNDS },
])('pnpm mock ($mode)', ({ dynamic, rounds }) => {
  let prism: PrismMock;
  beforeAll(async () => {
    prism = await startPrism({ dynamic });
  });
  afterAll(() => prism?.stop());

  it('covers every operation of the spec', () => {
    expect(EXAMPLE_REQUESTS.map((r) => r.op.operationId)).toEqual(OPERATIONS.map((op) => op.operationId));
  });

  it.each(EXAMPLE_REQUESTS.map((r) => [r.op.operationId, r] as const))(
    '%s answers within the spec',
    async (_id, { op, path, init }) => {
      for (let round = 0; round < rounds; round++) {
        const response = await fetch(`${prism.baseUrl}${path}`, init);
        const text = await response.text();
        const body = text ? JSON.parse(text) : undefined;
        const problems = [
          ...(response.status >= 400 ? [`status ${response.status}: ${text.slice(0, 300)}`] : []),
          ...responseViolations(op, response, body, { crossChecks: false, beyondSchema: !dynamic }),
          ...headerViolations(op, response.status, response.headers, validateHeader),
        ];
        expect(problems, `${init.method} ${path} round ${round + 1}`).toEqual([]);
      }
    },
  );
});
