import type { Role } from '../../../src/identity/roles.js';

/**
 * The permission classes of design §8, one per operation of the spec. This is the one place the
 * authorization table is written down for the tests: the matrix suite walks `listOperations(spec)`
 * and FAILS for an operation that has no class here, naming it, so a new route cannot ship without
 * someone deciding who may call it. It is an oracle, written from the design apart from the spec: the
 * spec declares each operation's permission too (`x-svc.permission`, which the server enforces), and
 * the matrix fails, naming the operation, where the two disagree.
 */
export type PermissionClass =
  /** No credential at all (GET /health). */
  | 'public'
  /** The Bearer credential is what is exchanged (POST /auth/token): an access token is refused. */
  | 'credential'
  /** Any authenticated principal, no workspace involved (its own identity, its workspaces, catalogues). */
  | 'principal'
  /** §8 row 1: read the workspace, computers, operations, members, service accounts (viewer and up). */
  | 'read'
  /** §8 row 2: create, change, start, stop, restart, delete computers (editor and up). */
  | 'computers'
  /** §8 row 3: run commands in running computers (editor and up; never a viewer). */
  | 'exec'
  /** §8 row 4: manage members (not owners), service accounts and keys (admin and up). */
  | 'manage'
  /** §8 row 5: grant or revoke owner; change or delete the workspace (owner). */
  | 'owner';

// The spec's roles (declared once, in the server): a role added there does not compile until `RANK` below ranks it.
export type { Role };

/** The weakest role a workspace-scoped class needs (design §8). */
export const NEEDS: Readonly<Record<'read' | 'computers' | 'exec' | 'manage' | 'owner', Role>> = {
  read: 'viewer',
  computers: 'editor',
  exec: 'editor',
  manage: 'admin',
  owner: 'owner',
};

export const RANK: Readonly<Record<Role, number>> = { viewer: 0, editor: 1, admin: 2, owner: 3 };

export const PERMISSIONS: Readonly<Record<string, PermissionClass>> = {
  getHealth: 'public',
  exchangeToken: 'credential',
  getMe: 'principal',
  listWorkspaces: 'principal',
  createWorkspace: 'principal',
  listSizes: 'principal',
  listImages: 'principal',
  getWorkspace: 'read',
  listMembers: 'read',
  getMember: 'read',
  listServiceAccounts: 'read',
  getServiceAccount: 'read',
  listKeys: 'read',
  listComputers: 'read',
  getComputer: 'read',
  listOperations: 'read',
  getOperation: 'read',
  streamWorkspaceEvents: 'read',
  listWebhookEndpoints: 'read',
  getWebhookEndpoint: 'read',
  listWebhookDeliveries: 'read',
  getWebhookDelivery: 'read',
  listSnapshots: 'read',
  getSnapshot: 'read',
  // That a terminal is open, its size and command: like a computer's state (design §16).
  listComputerTerminals: 'read',
  getComputerTerminal: 'read',
  createComputer: 'computers',
  updateComputer: 'computers',
  deleteComputer: 'computers',
  startComputer: 'computers',
  stopComputer: 'computers',
  restartComputer: 'computers',
  recoverComputer: 'computers',
  // A snapshot copies a computer into a new computer's image: the permission creating computers needs (design §8).
  createSnapshot: 'computers',
  deleteSnapshot: 'computers',
  execComputer: 'exec',
  runComputer: 'exec',
  streamOperationOutput: 'exec',
  downloadComputerFile: 'exec',
  uploadComputerFile: 'exec',
  deleteComputerFile: 'exec',
  getComputerFile: 'exec',
  listComputerFiles: 'exec',
  downloadComputerArchive: 'exec',
  uploadComputerArchive: 'exec',
  // A viewer may look at a screen, not touch it (design §18).
  downloadComputerScreen: 'read',
  streamComputerScreenFrames: 'read',
  inputComputer: 'exec',
  // A terminal runs what it is typed, and shows what it prints: a viewer reads nothing of it (design §16).
  createComputerTerminal: 'exec',
  updateComputerTerminal: 'exec',
  deleteComputerTerminal: 'exec',
  streamComputerTerminalOutput: 'exec',
  sendComputerTerminalInput: 'exec',
  getComputerTerminalScreen: 'exec',
  createMember: 'manage',
  updateMember: 'manage',
  deleteMember: 'manage',
  createServiceAccount: 'manage',
  updateServiceAccount: 'manage',
  deleteServiceAccount: 'manage',
  createKey: 'manage',
  deleteKey: 'manage',
  // Endpoints receive every event of the workspace and hold a secret, like keys (design §8).
  createWebhookEndpoint: 'manage',
  updateWebhookEndpoint: 'manage',
  deleteWebhookEndpoint: 'manage',
  disableWebhookEndpoint: 'manage',
  enableWebhookEndpoint: 'manage',
  rotateWebhookEndpoint: 'manage',
  testWebhookEndpoint: 'manage',
  redeliverWebhookDelivery: 'manage',
  updateWorkspace: 'owner',
  deleteWorkspace: 'owner',
};

/**
 * Operations that hand out, read or change what a principal can do across workspaces (its keys, its
 * roles): besides their class, the caller must hold the principal's roles in EVERY workspace where it
 * has one (`match`), or at least be a member of each (`read`), else `403 permission_denied`. A key of
 * a service account acts with all its roles, so managing it must never give more than the caller has.
 */
export const REACH: Readonly<Record<string, 'read' | 'match'>> = {
  listKeys: 'read',
  createKey: 'match',
  deleteKey: 'match',
  deleteServiceAccount: 'match',
};

/**
 * Operations that name a principal but do not reach past the workspace they are called in, with why.
 * An operation that names a principal (a `{service_account}` or `{member}` path parameter, or a
 * `principal_id` in its body) and is in neither map fails the matrix, naming itself.
 */
export const REACH_EXEMPT: Readonly<Record<string, string>> = {
  getServiceAccount: 'reads the service account as this workspace sees it: no credential, no other workspace',
  getMember: 'reads one membership of this workspace',
  deleteMember: "removes a role in this workspace only (a service account's home membership is refused)",
  createMember:
    "gives a role in this workspace only, never above the caller's own there (owner only by an owner); no credential changes hands",
  updateMember: 'the same, for an existing membership',
  updateServiceAccount: 'the same, for the role in its own workspace; renaming changes no power',
};
