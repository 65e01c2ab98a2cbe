// Open enums (`x-extensible-enum: true`): the generated types are `'a' | 'b' | (string & {})`, and the
// client's calls resolve to openapi-fetch's result without its Readable<> wrapper, which would turn that
// last member into an object (openapi-typescript#2765). The type assertions here are checked by
// `tsc --noEmit` (`pnpm --filter @svc/client typecheck`, part of `pnpm turbo run typecheck`): a regression
// fails the type check, not the run. The run checks that an unknown value passes through untouched.
import type { components } from '@svc/contract';
import { describe, expect, expectTypeOf, it } from 'vitest';
import type { Operation } from '../src/index.js';
import { fakeFetch, json, testClient } from './helpers.js';

type ComputerState = components['schemas']['ComputerState'];
/** The known values of an open enum: its members that are not just any string. */
type Known<T> = T extends unknown ? (string extends T ? never : T) : never;

const computer = { id: '01m6exhsj1k2chp3fbve8yyw29c', name: 'dev-box', state: 'hibernating' };

/**
 * Known states narrow in a switch: inside `case 'running'` the only known literal left is 'running'
 * (TypeScript keeps the `string & {}` member beside it, so the case is not reduced to the literal
 * alone); anything else falls through to `default` as a string.
 */
function label(state: ComputerState): string {
  switch (state) {
    case 'running':
      expectTypeOf<Known<typeof state>>().toEqualTypeOf<'running'>();
      return 'up';
    case 'stopped':
      return 'down';
    default:
      expectTypeOf(state).toExtend<string>();
      return `other: ${state.toUpperCase()}`;
  }
}

describe('open enums through client.GET', () => {
  it('types a response state as the known values or any other string', async () => {
    const { fetch } = fakeFetch(() => json(200, { computer }));
    const client = testClient(fetch);
    const { data } = await client.GET('/workspaces/{workspace}/computers/{computer}', {
      params: { path: { workspace: 'dev', computer: computer.name } },
    });
    if (!data) throw new Error('expected a body');
    const { state } = data.computer;
    expectTypeOf(state).toEqualTypeOf<ComputerState>();
    expectTypeOf(state).toExtend<string>();
    expectTypeOf<'running'>().toExtend<typeof state>();
    expectTypeOf<'hibernating'>().toExtend<typeof state>();
    // The known values are still listed (what editors offer), not absorbed into `string`.
    expectTypeOf<'stopped'>().toExtend<Known<typeof state>>();
    expectTypeOf<'hibernating'>().not.toExtend<Known<typeof state>>();
    // A closed enum would reject this assignment; an object-mangled one would reject `string`.
    const known: typeof state = 'running';
    const unknown: typeof state = 'hibernating';
    expect([known, unknown]).toEqual(['running', 'hibernating']);
    expect(state).toBe('hibernating');
    expect(label(state)).toBe('other: HIBERNATING');
    expect(label('running')).toBe('up');
  });

  it('keeps Operation.state and Operation.type open and string-typed', () => {
    expectTypeOf<Operation['state']>().toExtend<string>();
    expectTypeOf<Operation['type']>().toExtend<string>();
    expectTypeOf<'succeeded'>().toExtend<Operation['state']>();
    expectTypeOf<'paused'>().toExtend<Operation['state']>();
  });
});
