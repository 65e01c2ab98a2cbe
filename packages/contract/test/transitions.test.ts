// The state machine as the spec writes it, and the errors of a spec that breaks it.
import { describe, expect, test } from 'vitest';
import {
  loadDocument,
  type OpenApiDocument,
  operationTransitions,
  TRANSITIONS_EXTENSION,
} from '../src/index.js';

/** The bundle with its state machine changed by `change`. */
function withTransitions(change: (table: Record<string, unknown>) => void): OpenApiDocument {
  const document = structuredClone(loadDocument());
  change(document[TRANSITIONS_EXTENSION] as Record<string, unknown>);
  return document;
}

describe('operationTransitions', () => {
  test('every operation type of the spec, with what it does to its computer', () => {
    const table = operationTransitions(loadDocument());
    expect(table['computer.stop']).toEqual({ from: ['running'], during: 'stopping', to: 'stopped' });
    expect(table['computer.create']).toEqual({ from: [], during: 'creating', to: 'running' });
    // A command and a snapshot leave the state alone.
    expect(table['computer.exec']).toEqual({ from: ['running'] });
    expect(table['computer.snapshot']).toEqual({ from: ['running', 'stopped'] });
  });

  test('a spec that breaks the state machine is refused where it is read', () => {
    expect(() => operationTransitions(withTransitions((t) => delete t['computer.stop']))).toThrow(
      'computer.stop has no transition',
    );
    expect(() =>
      operationTransitions(withTransitions((t) => Object.assign(t, { 'computer.fly': { from: [] } }))),
    ).toThrow('computer.fly is not an OperationType');
    expect(() =>
      operationTransitions(
        withTransitions((t) => Object.assign(t, { 'computer.stop': { from: ['asleep'] } })),
      ),
    ).toThrow('"asleep", not a ComputerState');
    expect(() =>
      operationTransitions(
        withTransitions((t) =>
          Object.assign(t, { 'computer.stop': { from: ['running'], during: 'stopping' } }),
        ),
      ),
    ).toThrow('one of during and to without the other');
  });
});
