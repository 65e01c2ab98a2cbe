// What each handler module may reach of the app's services: one interface per module (or per pair
// that shares helpers), so a handler reaches only its own feature's services and settings (a
// terminal's handler has no webhook outbox). `AppDeps` is all of them together, built once by
// `createDeps` (compose/deps.ts); the dispatcher hands the same object to every handler.
import type { ComputerChanges, WaitSlots } from '../computers/computer-waits.js';
import type { ComputersSection } from '../computers/config.js';
import type { DockerSection } from '../computers/docker/config.js';
import type { ComputerDriver } from '../computers/driver.js';
import type { OperationEvents } from '../computers/events.js';
import type { FilesSection } from '../computers/files/config.js';
import type { ReadCache } from '../computers/repositories/read-cache.js';
import type { Desktops } from '../desktops/desktops.js';
import type { FleetSection } from '../fleet/config.js';
import type { AccessTokens } from '../identity/auth/access-token.js';
import type { ServerKeys } from '../identity/auth/signing-keys.js';
import type { IdentitySection } from '../identity/config.js';
import type { Database } from '../platform/db/database.js';
import type { Cursors } from '../platform/paging.js';
import type { RateLimiter } from '../platform/ratelimit.js';
import type { SecretBox } from '../platform/secrets.js';
import type { ServerSection } from '../platform/server-config.js';
import type { Streams } from '../streams/registry.js';
import type { Wakeups } from '../streams/wakeups.js';
import type { Terminals } from '../terminals/manager.js';
import type { WebhooksSection } from '../webhooks/config.js';
import type { OutboundOptions } from '../webhooks/outbound.js';

/** The deps of a handler that reaches no service (`getMe`: the caller is on its context). */
export type NoDeps = Readonly<Record<never, never>>;

/** Writes one line to the request log (an audited action: who ran what, never secrets or output). */
export type Audit = (message: string, fields: Record<string, unknown>) => void;

/** What every list pages with: this replica's cursor key. */
interface Paging {
  cursors: Cursors;
}

/** What runs on a computer reaches: its driver, the lifetimes' clock, the audit line. */
interface OnComputer {
  /** What runs computers: the worker drives its actions, `execComputer` runs commands through it. */
  driver: ComputerDriver;
  /** Milliseconds since the epoch for computer lifetimes (expiries, activity); tests move it. */
  lifetimeNow: () => number;
  audit: Audit;
}

/** What waits for a computer's state (`?wait_for=`, a command waiting for its computer). */
interface ComputerWaits {
  /** Wake-ups for waits on a computer's state, fed by `NOTIFY svc_computer_changes` (see computer-waits.ts). */
  computerChanges: ComputerChanges;
  /** The waits on a computer's state each principal holds here (`SVC_COMPUTER_WAITS_PER_PRINCIPAL`). */
  computerWaits: WaitSlots;
}

/** The driver's snapshots, and its name for the refusal when it keeps none (`snapshotStore`). */
export interface SnapshotStoreDeps {
  driver: Pick<ComputerDriver, 'name' | 'snapshots'>;
}

/** What `followed` (streams.ts) reaches: the caller's token, and this replica's open streams. */
export interface FollowDeps {
  tokens: Pick<AccessTokens, 'verify'>;
  /** The event streams open here: each principal's share, keep-alive, re-authentication, the drain. */
  streams: Streams;
}

/** health.ts */
export interface HealthDeps {
  /** The version `GET /health` reports: the spec's `info.version`. */
  version: string;
}

/** auth.ts: exchanging a credential for tokens. */
export interface AuthDeps {
  db: Pick<Database, 'engine'>;
  tokens: AccessTokens;
  config: Pick<IdentitySection, 'tokenUrl'>;
}

/** workspaces.ts: a workspace's deletion removes its snapshots. */
export interface WorkspaceDeps extends Paging, SnapshotStoreDeps {
  config: Pick<IdentitySection, 'quotas'>;
}

/** members.ts, service-accounts.ts */
export interface MemberDeps extends Paging {
  config: Pick<IdentitySection, 'quotas'>;
}

/** keys.ts: a key file names the server's base address. */
export interface KeyDeps extends Paging {
  config: Pick<IdentitySection, 'quotas'> & Pick<ServerSection, 'baseUrl'>;
}

/** computers.ts */
export interface ComputerDeps extends Paging, OnComputer, ComputerWaits {
  /** Computers read through this replica's cache (never older than the database; see ReadCache). */
  reads: ReadCache;
  config: Pick<ComputersSection, 'quotas' | 'driver'> & DockerSection & FleetSection;
}

/** exec.ts */
export interface ExecDeps extends OnComputer, ComputerWaits {}

/** files.ts, file-transfer.ts */
export interface FileDeps extends Paging, OnComputer {
  config: FilesSection;
}

/** operations.ts */
export interface OperationDeps extends Paging {
  events: OperationEvents;
}

/** catalog.ts: the images the driver has. */
export interface CatalogDeps extends Paging {
  driver: ComputerDriver;
}

/** snapshots.ts */
export interface SnapshotDeps extends Paging, SnapshotStoreDeps {
  config: Pick<ComputersSection, 'quotas'>;
}

/** streams.ts: the workspace's event log and a command's output, followed. */
export interface StreamDeps extends FollowDeps {
  /** Wake-ups of workspace event streams, per workspace id (`NOTIFY` on the events channel). */
  workspaceEvents: Wakeups;
  /** Wake-ups of command output streams, per operation id (`NOTIFY` on the output channel). */
  operationOutput: Wakeups;
  lifetimeNow: () => number;
  config: Pick<ComputersSection, 'outputRetentionHours'>;
}

/** Webhooks: sealing endpoint secrets, the URL checks, their clock, and waking this replica's worker. */
export interface WebhookServices {
  box: SecretBox;
  outbound: OutboundOptions;
  now: () => number;
  wake(): void;
}

/** webhooks.ts */
export interface WebhookDeps extends Paging {
  webhooks: WebhookServices;
  config: Pick<WebhooksSection, 'quotas'>;
}

/** desktops.ts: a screen and its input, and a stream of its frames. */
export interface DesktopDeps extends FollowDeps {
  /** The desktop of the app's driver, and the rates of screens and input per computer. */
  desktops: Desktops;
  lifetimeNow: () => number;
  audit: Audit;
}

/** terminals.ts */
export interface TerminalDeps extends FollowDeps, Paging {
  /** The terminals this replica holds, and the wake-ups of terminal output streams (design §17). */
  terminals: Terminals;
  driver: Pick<ComputerDriver, 'name'>;
  audit: Audit;
}

/** What the app holds besides for what serves handlers: the dispatcher's database and rate limiter. */
export interface CoreDeps {
  db: Database;
  serverKeys: ServerKeys;
  limiter: RateLimiter | undefined;
  streams: Streams;
}

/** Everything handlers share, built once by `createDeps`: every module's deps together. */
export type AppDeps = CoreDeps &
  HealthDeps &
  AuthDeps &
  WorkspaceDeps &
  MemberDeps &
  KeyDeps &
  ComputerDeps &
  ExecDeps &
  FileDeps &
  OperationDeps &
  CatalogDeps &
  SnapshotDeps &
  StreamDeps &
  WebhookDeps &
  DesktopDeps &
  TerminalDeps;
