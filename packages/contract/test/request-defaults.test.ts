// A request field with a `default` may be left out: the server applies the default. The generated types
// say so (scripts/generate.mjs: defaultNonNullable false); `pnpm typecheck` fails otherwise.
import { describe, expectTypeOf, it } from 'vitest';
import type { components } from '../src/index.js';

type Schemas = components['schemas'];

describe('request bodies: fields with a default are optional', () => {
  it('execComputer needs only argv; createKey needs nothing', () => {
    expectTypeOf<{ argv: string[] }>().toExtend<Schemas['ExecComputerRequest']>();
    expectTypeOf<Record<string, never>>().toExtend<Schemas['CreateKeyRequest']>();
    expectTypeOf<Schemas['ExecComputerRequest']['timeout_seconds']>().toEqualTypeOf<number | undefined>();
  });
});
