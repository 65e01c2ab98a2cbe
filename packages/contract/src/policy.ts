// What an operation needs beyond its HTTP shape, declared once in the spec beside the operation as
// `x-svc` and read here, one way, by every package: who may call it, whether a mutation runs in a
// transaction, how `svc` and MCP present it, whether it is a custom action. The spec's linter
// (spec/rules, svc-policy and svc-custom-action) checks the declarations against the rest of the
// operation; this reader checks only the vocabulary, the same as spec/rules/lib/policy.js (a test
// compares the two).
import type { OpenApiDocument } from './document.js';
import type { OperationInfo } from './operations.js';

/** Who may call an operation: three kinds of caller outside any workspace, then design §8's rows. */
export const PERMISSIONS = [
  'public',
  'credential',
  'principal',
  'read',
  'computers',
  'exec',
  'manage',
  'owner',
] as const;
/**
 * `public`: no credential; `credential`: the Bearer is the credential exchanged (`POST /auth/token`);
 * `principal`: any authenticated principal, no workspace; the rest: a role in the workspace (design §8).
 */
export type Permission = (typeof PERMISSIONS)[number];

/** The permissions that are a role in the workspace an operation acts in (design §8). */
export const WORKSPACE_PERMISSIONS = ['read', 'computers', 'exec', 'manage', 'owner'] as const;
/** A role in a workspace (design §8): `read` (viewer and up) … `owner`. */
export type WorkspacePermission = (typeof WORKSPACE_PERMISSIONS)[number];

/**
 * How a mutation meets the database: `single` (the default) commits the handler's writes and the
 * Idempotency-Key record in one transaction; `none` runs outside one (nothing it writes must commit with
 * that record, and it holds no connection while it waits).
 */
export const TRANSACTIONS = ['single', 'none'] as const;
export type Transaction = (typeof TRANSACTIONS)[number];

/**
 * How `svc` presents an operation beyond its generic command: `execution` runs a command (its output
 * printed, its exit code svc's, `--stdin`); `key-file` answers a one-time key file (written to a private
 * file, never printed).
 */
export const CLI_PRESENTATIONS = ['execution', 'key-file'] as const;
export type CliPresentation = (typeof CLI_PRESENTATIONS)[number];

/** A custom action's MCP hints, in MCP's meanings (`destructiveHint`, `idempotentHint`). */
export interface McpHints {
  /** It may overwrite or remove existing state (false: it only adds). */
  destructive: boolean;
  /** Calling it again with the same arguments has no further effect on the service. */
  idempotent: boolean;
}

/** What one operation declares beyond its HTTP shape (`x-svc`), with the defaults filled in. */
export interface OperationPolicy {
  /** Who may call it. */
  permission: Permission;
  /** The verb of a custom action (`start`, `exchange`); undefined for a standard method. */
  action: string | undefined;
  /** How a mutation meets the database; `single` unless declared. */
  transaction: Transaction;
  /** How `svc` presents it; undefined: the generic command. */
  cli: CliPresentation | undefined;
  /** A custom action's MCP hints; undefined: they follow from the HTTP method. */
  mcp: McpHints | undefined;
}

const KEYS = ['permission', 'action', 'transaction', 'cli', 'mcp'];

const oneOf = <T extends string>(values: readonly T[], value: unknown): value is T =>
  typeof value === 'string' && (values as readonly string[]).includes(value);

/**
 * The policy an operation declares in the spec (`x-svc`), with the defaults filled in. Throws,
 * naming the operation, when it declares none or a value outside the vocabulary: the spec's linter
 * refuses both, so this fails only on a document that was never linted.
 *
 * @example
 * import { listOperations, loadDocument, operationPolicy } from '@svc/contract';
 * const doc = loadDocument();
 * const exec = listOperations(doc).find((o) => o.operationId === 'execComputer');
 * if (exec) operationPolicy(doc, exec).transaction; // 'none'
 */
export function operationPolicy(_document: OpenApiDocument, op: OperationInfo): OperationPolicy {
  const declared = op.operation['x-svc'];
  const fail = (problem: string): never => {
    throw new Error(`${op.operationId} (${op.method.toUpperCase()} ${op.path}): x-svc ${problem}`);
  };
  if (typeof declared !== 'object' || declared === null || Array.isArray(declared))
    return fail('is missing: every operation declares at least its permission');
  const policy = declared as Record<string, unknown>;
  const unknown = Object.keys(policy).filter((key) => !KEYS.includes(key));
  if (unknown.length > 0) fail(`has unknown keys: ${unknown.join(', ')}`);
  const { permission, action, transaction = 'single', cli, mcp } = policy;
  if (!oneOf(PERMISSIONS, permission)) return fail(`permission ${JSON.stringify(permission)} is unknown`);
  if (action !== undefined && (typeof action !== 'string' || !/^[a-z]+$/.test(action)))
    fail(`action ${JSON.stringify(action)} is not a verb`);
  if (!oneOf(TRANSACTIONS, transaction)) return fail(`transaction ${JSON.stringify(transaction)} is unknown`);
  if (cli !== undefined && !oneOf(CLI_PRESENTATIONS, cli)) fail(`cli ${JSON.stringify(cli)} is unknown`);
  const hints = mcp as Partial<McpHints> | undefined;
  if (
    hints !== undefined &&
    (typeof hints.destructive !== 'boolean' ||
      typeof hints.idempotent !== 'boolean' ||
      Object.keys(hints).length !== 2)
  )
    fail('mcp gives exactly two booleans, destructive and idempotent');
  return {
    permission,
    action: action as string | undefined,
    transaction,
    cli: cli as CliPresentation | undefined,
    mcp:
      hints === undefined
        ? undefined
        : ({ destructive: hints.destructive, idempotent: hints.idempotent } as McpHints),
  };
}

/**
 * Whether a permission is a role in a workspace (design §8), rather than a kind of caller outside one.
 *
 * @example
 * isWorkspacePermission('exec'); // true
 * isWorkspacePermission('principal'); // false
 */
export function isWorkspacePermission(permission: Permission): permission is WorkspacePermission {
  return oneOf(WORKSPACE_PERMISSIONS, permission);
}
