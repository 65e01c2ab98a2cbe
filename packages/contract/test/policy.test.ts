import { describe, expect, expectTypeOf, it } from 'vitest';
import {
  CLI_PRESENTATIONS,
  isWorkspacePermission,
  listOperations,
  loadDocument,
  type OperationId,
  type OperationInfo,
  operationPolicy,
  PERMISSIONS,
  type Permission,
  type PermissionOf,
  type PolicyOf,
  TRANSACTIONS,
  WORKSPACE_PERMISSIONS,
} from '../src/index.js';

const document = loadDocument();
const operations = listOperations(document);
const byId = (id: string) => operations.find((op) => op.operationId === id) as OperationInfo;

describe('operationPolicy', () => {
  it('reads a policy for every operation of the bundle', () => {
    const read = operations.map((op) => [op.operationId, operationPolicy(document, op).permission]);
    expect(read).toHaveLength(operations.length);
    for (const [, permission] of read) expect(PERMISSIONS).toContain(permission);
  });

  it('fills in the defaults of a standard method', () => {
    expect(operationPolicy(document, byId('getHealth'))).toEqual({
      permission: 'public',
      action: undefined,
      transaction: 'single',
      cli: undefined,
      mcp: undefined,
    });
  });

  it('reads everything a custom action declares', () => {
    expect(operationPolicy(document, byId('execComputer'))).toEqual({
      permission: 'exec',
      action: 'exec',
      transaction: 'none',
      cli: 'execution',
      mcp: { destructive: true, idempotent: false },
    });
  });

  const op = (policy: unknown): OperationInfo => ({
    ...byId('getMe'),
    operation: { operationId: 'getMe', ...(policy === undefined ? {} : { 'x-svc': policy }) },
  });
  it.each([
    ['no x-svc', undefined, 'getMe (GET /me): x-svc is missing'],
    ['an unknown key', { permission: 'read', role: 'viewer' }, 'x-svc has unknown keys: role'],
    ['an unknown permission', { permission: 'admin' }, 'x-svc permission "admin" is unknown'],
    [
      'an action that is no verb',
      { permission: 'read', action: 'Start' },
      'x-svc action "Start" is not a verb',
    ],
    [
      'an unknown transaction',
      { permission: 'read', transaction: 'later' },
      'x-svc transaction "later" is unknown',
    ],
    ['an unknown presentation', { permission: 'read', cli: 'table' }, 'x-svc cli "table" is unknown'],
    ['half the MCP hints', { permission: 'read', mcp: { destructive: true } }, 'x-svc mcp gives exactly two'],
  ])('throws, naming the operation, on %s', (_name, policy, message) => {
    expect(() => operationPolicy(document, op(policy))).toThrow(message);
  });
});

describe('the vocabulary', () => {
  it('is the one the spec linter checks (spec/rules/lib/policy.js)', async () => {
    const url = new URL('../../../spec/rules/lib/policy.js', import.meta.url).href;
    const lint = (await import(url)) as Record<string, Record<string, unknown> | readonly string[]>;
    expect(Object.keys(lint.PERMISSIONS as object)).toEqual([...PERMISSIONS]);
    expect(lint.WORKSPACE_PERMISSIONS).toEqual([...WORKSPACE_PERMISSIONS]);
    expect(Object.keys(lint.TRANSACTIONS as object)).toEqual([...TRANSACTIONS]);
    expect(Object.keys(lint.CLI_PRESENTATIONS as object)).toEqual([...CLI_PRESENTATIONS]);
  });

  it('tells a workspace role from a kind of caller', () => {
    expect(PERMISSIONS.filter(isWorkspacePermission)).toEqual([...WORKSPACE_PERMISSIONS]);
  });
});

describe('the policy types', () => {
  it('type each operation by what its x-svc declares', () => {
    expectTypeOf<PermissionOf<'execComputer'>>().toEqualTypeOf<'exec'>();
    expectTypeOf<PermissionOf<'getHealth'>>().toEqualTypeOf<'public'>();
    expectTypeOf<PolicyOf<'execComputer'>['transaction']>().toEqualTypeOf<'none'>();
    expectTypeOf<PermissionOf<OperationId>>().toExtend<Permission>();
  });
});
