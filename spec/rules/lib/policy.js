// The vocabulary of `x-svc`, the extension every operation of the v1 spec carries: what the operation
// needs beyond its HTTP shape, declared once beside it and read by every package through
// `operationPolicy` of @svc/contract (which keeps the same vocabulary as TypeScript types; its test
// compares the two). Spectral's svc-policy and svc-custom-action check the declarations, Redocly's
// svc/operation-id-verb reads `action`, and the breaking-change gate compares `permission`.
//
//   x-svc:
//     permission: exec        # who may call it (required)
//     action: exec            # a custom action, and its verb
//     transaction: none       # a mutation that runs outside a transaction
//     cli: execution          # how `svc` presents it
//     mcp:                    # a custom action's MCP hints
//       destructive: true
//       idempotent: false

/**
 * Who may call an operation: three kinds of caller outside any workspace, then the rows of design §8
 * (a role in the workspace the operation acts in).
 */
export const PERMISSIONS = Object.freeze({
  public: 'no credential at all (GET /health); its security is `[]`',
  credential:
    'the Bearer is the credential being exchanged (POST /auth/token), never an access token; its security names another scheme',
  principal:
    'any authenticated principal, no workspace involved (its identity, its workspaces, the catalogues)',
  read: 'design §8 row 1: read the workspace and what is in it (viewer and up)',
  computers: 'design §8 row 2: create, change, start, stop, restart, delete computers (editor and up)',
  exec: 'design §8 row 3: run commands in running computers and reach their files (editor and up)',
  manage:
    'design §8 row 4: manage members (not owners), service accounts, keys and webhook endpoints (admin and up)',
  owner: 'design §8 row 5: grant or revoke owner; change or delete the workspace (owner)',
});

/** The permissions that are a role in a workspace (design §8). */
export const WORKSPACE_PERMISSIONS = Object.freeze(['read', 'computers', 'exec', 'manage', 'owner']);

/**
 * How many callers a permission admits, from the most (0) to the fewest: a change to a higher rank
 * shuts out callers who could call before. `computers` and `exec` admit the same roles today (design
 * §8). `credential` admits another kind of caller altogether, so it has no rank.
 */
export const PERMISSION_RANK = Object.freeze({
  public: 0,
  principal: 1,
  read: 2,
  computers: 3,
  exec: 3,
  manage: 4,
  owner: 5,
});

/** How a mutation (an operation that takes `Idempotency-Key`) meets the database. */
export const TRANSACTIONS = Object.freeze({
  single:
    'the default: the handler and the Idempotency-Key record commit together, in one transaction (design §10)',
  none: 'outside a transaction: nothing it writes must commit with its Idempotency-Key record (each write stands alone), and it holds no connection while it waits on something slow',
});

/** How `svc` presents an operation beyond its generic command (options from the schema, a table or JSON). */
export const CLI_PRESENTATIONS = Object.freeze({
  execution:
    "it runs a command: svc prints the command's stdout and stderr, exits with its exit code, and sends its own stdin with `--stdin`",
  'key-file':
    'it answers with a one-time key file: svc writes it to a file of mode 0600 (`--key-file`) and never prints the private key',
});

/** The MCP hints a custom action declares (MCP's `destructiveHint` and `idempotentHint`). */
export const MCP_HINTS = Object.freeze({
  destructive: 'it may overwrite or remove existing state (false: it only adds)',
  idempotent: 'calling it again with the same arguments has no further effect on the service',
});

/** The keys of `x-svc`, each with what it says. */
export const POLICY_KEYS = Object.freeze({
  permission: 'who may call it (required)',
  action: 'the verb of a custom action (`start`): a POST that is no standard method',
  transaction: 'a mutation that does not run in one transaction with its Idempotency-Key record',
  cli: 'how `svc` presents it',
  mcp: "a custom action's MCP hints (standard methods take theirs from the HTTP method)",
});
