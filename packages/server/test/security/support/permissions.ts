/**
 * The permission classes of API.md §8, one per operation of the spec. This is the one place the
 * authorization table is written down for the tests: the matrix suite walks `listOperations(spec)`
 * and FAILS for an operation that has no class here, naming it, so a new route cannot ship without
 * someone deciding who may call it.
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
  /** §8 row 3: manage members (not owners), service accounts and keys (admin and up). */
  | 'manage'
  /** §8 row 4: grant or revoke owner; change or delete the workspace (owner). */
  | 'owner';

export type Role = 'viewer' | 'editor' | 'admin' | 'owner';

/** The weakest role a workspace-scoped class needs (API.md §8). */
export const NEEDS: Readonly<Record<'read' | 'computers' | 'manage' | 'owner', Role>> = {
  read: 'viewer',
  computers: 'editor',
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
  createComputer: 'computers',
  updateComputer: 'computers',
  deleteComputer: 'computers',
  startComputer: 'computers',
  stopComputer: 'computers',
  restartComputer: 'computers',
  createMember: 'manage',
  updateMember: 'manage',
  deleteMember: 'manage',
  createServiceAccount: 'manage',
  updateServiceAccount: 'manage',
  deleteServiceAccount: 'manage',
  createKey: 'manage',
  deleteKey: 'manage',
  updateWorkspace: 'owner',
  deleteWorkspace: 'owner',
};
