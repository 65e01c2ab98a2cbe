import { authHandlers } from '../handlers/auth.js';
import { catalogHandlers } from '../handlers/catalog.js';
import { computerHandlers } from '../handlers/computers.js';
import { desktopHandlers } from '../handlers/desktops.js';
import { execHandlers } from '../handlers/exec.js';
import { fileHandlers } from '../handlers/files.js';
import { healthHandlers } from '../handlers/health.js';
import { identityHandlers } from '../handlers/identity.js';
import { keyHandlers } from '../handlers/keys.js';
import { memberHandlers } from '../handlers/members.js';
import { operationHandlers } from '../handlers/operations.js';
import { serviceAccountHandlers } from '../handlers/service-accounts.js';
import { snapshotHandlers } from '../handlers/snapshots.js';
import { streamHandlers } from '../handlers/streams.js';
import { terminalHandlers } from '../handlers/terminals.js';
import type { Handlers } from '../handlers/types.js';
import { webhookHandlers } from '../handlers/webhooks.js';
import { workspaceHandlers } from '../handlers/workspaces.js';

/**
 * One handler per operation of the spec. A spec operation without a handler here is a type error
 * (`Handlers` is keyed by the generated `OperationId`).
 */
export const handlers: Handlers = {
  ...healthHandlers,
  ...authHandlers,
  ...identityHandlers,
  ...workspaceHandlers,
  ...memberHandlers,
  ...serviceAccountHandlers,
  ...keyHandlers,
  ...computerHandlers,
  ...execHandlers,
  ...fileHandlers,
  ...operationHandlers,
  ...catalogHandlers,
  ...streamHandlers,
  ...webhookHandlers,
  ...snapshotHandlers,
  ...desktopHandlers,
  ...terminalHandlers,
};
