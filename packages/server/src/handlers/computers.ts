import type { operations } from '@svc/contract';
import { waitForComputerState } from '../computers/computer-waits.js';
import { createLifetime, lifetimeChange } from '../computers/lifetimes.js';
import { createComputerRecord, requestComputerAction } from '../computers/records.js';
import { renderComputer, renderOperation } from '../computers/render.js';
import { listImageRows } from '../computers/repositories/catalog.js';
import {
  type ComputerView,
  computerIn,
  computerNameTaken,
  readComputer,
  readComputerPage,
  takeComputerPlace,
  updateComputerRow,
} from '../computers/repositories/computers.js';
import { touchComputerActivity } from '../computers/repositories/lifetimes.js';
import type { OperationRow } from '../computers/repositories/operations.js';
import { COMPUTER_STATES, type ComputerState } from '../computers/states.js';
import { setScreenAtCreate } from '../desktops/repositories/screens.js';
import { placeNewComputer } from '../fleet/place.js';
import { JsonBytes } from '../http/json-bytes.js';
import { ApiError, invalidArgument } from '../platform/errors.js';
import type { Cursors, PageRequest } from '../platform/paging.js';
import { pageRequest, samePageRequest, toPage } from '../platform/paging.js';
import { API_PREFIX, checkName, permittedWorkspace, quotaExceeded } from './common.js';
import type { ComputerDeps } from './deps.js';
import { MAX_WAIT_SECONDS } from './operations.js';
import { snapshotForCreate } from './snapshots.js';
import type { Ctx, Handler } from './types.js';

function checkLabels(deps: ComputerDeps, labels: Record<string, string> | undefined): void {
  if (!labels) return;
  const limit = deps.config.quotas.labelsPerComputer;
  const count = Object.keys(labels).length;
  // The spec's details.quota has no value for labels yet; `limit` says what the quota is.
  if (count > limit) throw quotaExceeded(undefined, limit, `a computer may carry at most ${limit} labels`);
  for (const [key, value] of Object.entries(labels)) {
    checkName(key, `labels.${key}`);
    checkName(value, `labels.${key}`);
  }
}

export function accepted(operations: OperationRow[]): { location: string; 'retry-after': string } {
  return { location: `${API_PREFIX}/operations/${operations[0]?.id}`, 'retry-after': '1' };
}

export const listComputers: Handler<'listComputers', ComputerDeps> = async (ctx) => {
  const { workspace } = await permittedWorkspace(ctx);
  const { state, label, include_deleted } = ctx.query;
  const page = pageRequest(ctx.deps.cursors, ctx.query, {
    op: 'listComputers',
    workspace: workspace.id,
    state: state ?? null,
    label: label ?? null,
    include_deleted: include_deleted === true,
  });
  const selector = label === undefined ? null : Object.fromEntries([label.split('=') as [string, string]]);
  const rows = await readComputerPage(ctx.deps.reads, ctx.db, {
    workspaceId: workspace.id,
    state: state ?? null,
    selector,
    includeDeleted: include_deleted === true,
    after: page.after,
    limit: page.limit + 1,
  });
  return { status: 200, body: pageAnswer(ctx.deps.cursors, page, rows) };
};

type ComputerPage = operations['listComputers']['responses'][200]['content']['application/json'];

/** Each page read's answer, by the rows the read returned (see {@link pageAnswer}). */
const pageAnswers = new WeakMap<
  readonly ComputerView[],
  { cursors: Cursors; page: PageRequest; body: JsonBytes<ComputerPage> }
>();

/**
 * The answer to a page of computers, rendered and serialized once per page read: a hit of the read
 * cache returns the very rows (the same array) it returned before, until a change drops them, so it
 * answers the bytes made for them then, with nothing rendered, signed or stringified again. A page
 * read again from the database is a new array, so a dropped page is never answered. The request is
 * compared too (the cursor signs its filters), though the cache's key already pins it.
 */
function pageAnswer(cursors: Cursors, page: PageRequest, rows: ComputerView[]): JsonBytes<ComputerPage> {
  const known = pageAnswers.get(rows);
  if (known && known.cursors === cursors && samePageRequest(known.page, page)) return known.body;
  const { items, next_cursor, has_more } = toPage(cursors, page, rows);
  const body = JsonBytes.of<ComputerPage>({ computers: items.map(renderComputer), next_cursor, has_more });
  pageAnswers.set(rows, { cursors, page, body });
  return body;
}

export const getComputer: Handler<'getComputer', ComputerDeps> = async (ctx) => {
  const { workspace } = await permittedWorkspace(ctx);
  const read = () => readComputer(ctx.deps.reads, ctx.db, workspace.id, ctx.path.computer);
  const { wait_for, wait } = ctx.query;
  if (wait_for === undefined) return { status: 200, body: { computer: renderComputer(await read()) } };
  const states = waitedStates(wait_for);
  const timeoutMs = Math.min(wait ?? 0, MAX_WAIT_SECONDS) * 1000;
  // A wait that answers at once takes no slot; one that holds takes one of its principal's until it answers.
  const { computer, result } = await waitForComputerState(
    read,
    ctx.deps.computerChanges,
    workspace.id,
    states,
    timeoutMs,
    { signal: ctx.request.signal, hold: () => ctx.deps.computerWaits.take(ctx.principal.id) },
  );
  return { status: 200, body: { computer: renderComputer(computer) }, headers: { 'wait-result': result } };
};

/** `wait_for`'s comma-separated states, each checked against the spec's `ComputerState`. */
function waitedStates(value: string): ReadonlySet<ComputerState> {
  const names = value.split(',');
  const unknown = names.filter((name) => !COMPUTER_STATES.has(name as ComputerState));
  if (unknown.length > 0)
    throw invalidArgument([
      {
        field: 'wait_for',
        description: `not a computer state: ${unknown.join(', ')} (one of ${[...COMPUTER_STATES].join(', ')})`,
      },
    ]);
  return new Set(names as ComputerState[]);
}

/**
 * Creates a computer and starts it: 202 with the computer (`creating`) and its `computer.create` operation.
 * Nothing locks the workspace until the quota's counter moves, the transaction's last statement, sent
 * with its COMMIT (`commitWith`, after the idempotency record): a name clash is the unique index's to
 * find, so concurrent creates in one workspace overlap until then and wait only for each other's commit.
 */
/**
 * Refuses at once (400 on `image`, naming the images that do run) a catalogue image the driver knows
 * it cannot run here now (its Engine answered that it lacks it), so no failed computer keeps the name. A driver that pulls
 * what it lacks (`SVC_DOCKER_PULL=missing`) and an image the catalogue does not hold are left to the
 * create itself.
 */
async function assertImageRuns(
  deps: ComputerDeps,
  db: Ctx<'createComputer', ComputerDeps>['db'],
  image: string,
): Promise<void> {
  const { driver } = deps;
  if (!driver.imageMissing || (deps.config.driver === 'docker' && deps.config.docker.pull === 'missing'))
    return;
  // Only an Engine that answered: one that does not answer now is the create's to wait for (503).
  if (!(await driver.imageMissing(image, db))) return;
  const catalogue = await listImageRows(db, { after: null, limit: 100 });
  if (!catalogue.some((row) => row.name === image)) return;
  const runs: string[] = [];
  for (const row of catalogue)
    if (row.name !== image && (await driver.imageAvailable?.(row.name, db))) runs.push(row.name);
  throw invalidArgument([
    {
      field: 'image',
      description: `the image "${image}" cannot run on this ${driver.name} host now; ${
        runs.length > 0 ? `images that do: ${runs.sort().join(', ')}` : 'no image runs here now'
      } (GET /images)`,
    },
  ]);
}

export const createComputer: Handler<'createComputer', ComputerDeps> = async (ctx) => {
  const { workspace } = await permittedWorkspace(ctx);
  await ctx.countMutation(workspace.id);
  const { name, size, image, snapshot: snapshotRef, labels, lifetime } = ctx.body;
  checkName(name);
  checkLabels(ctx.deps, labels);
  // Exactly one of `image` and `snapshot` (design §4.2); a snapshot gives its image.
  if ((image === undefined) === (snapshotRef === undefined))
    throw invalidArgument([
      {
        field: image === undefined ? 'image' : 'snapshot',
        description: 'give exactly one of image and snapshot',
      },
    ]);
  if (image !== undefined) await assertImageRuns(ctx.deps, ctx.db, image);
  const snapshot =
    snapshotRef === undefined ? undefined : await snapshotForCreate(ctx, workspace.id, snapshotRef);
  // What the create leaves out of its lifetime, the workspace's defaults give (design §4.1).
  const ends = createLifetime(lifetime, workspace.lifetime_defaults, ctx.deps.lifetimeNow());
  const { computer, operation } = await createComputerRecord(
    ctx.db,
    {
      workspace_id: workspace.id,
      name,
      size,
      image: snapshot ? snapshot.image : (image as string),
      ...(snapshot ? { snapshot_id: snapshot.id } : {}),
      labels: labels ?? {},
      ...ends,
    },
    ctx.principal.id,
  );
  await setScreenAtCreate(ctx.db, computer, ctx.body.screen);
  // On a host with room (design §4.4), under that host's row lock until the commit; a computer made
  // from a snapshot goes where the snapshot's image is. No room: 503, and nothing is created.
  // Only a driver that runs computers on hosts places them: without one, a create costs no statement more.
  if (ctx.deps.driver.fleet) {
    const hostId = await placeNewComputer(
      ctx.db,
      { ...computer, host_id: snapshot?.host_id ?? null },
      {
        policy: ctx.deps.config.fleet.policy,
        unhealthyAfterMs: ctx.deps.config.fleet.unhealthyAfterMs,
        required: true,
      },
    );
    if (hostId) computer.host_id = hostId;
  }
  const limit = ctx.deps.config.quotas.computersPerWorkspace;
  await takeComputerPlace(ctx.db, workspace.id, limit, () =>
    quotaExceeded(
      'computers_per_workspace',
      limit,
      `workspace ${workspace.name} already has ${limit} live computers`,
    ),
  );
  return {
    status: 202,
    body: { computer: renderComputer(computer), operations: [renderOperation(operation, { result: true })] },
    headers: accepted([operation]),
  };
};

/**
 * Renames or re-labels a computer, or changes its lifetime (the fields named; `null` clears one), in
 * any state but `deleted`.
 */
export const updateComputer: Handler<'updateComputer', ComputerDeps> = async (ctx) => {
  const { workspace } = await permittedWorkspace(ctx);
  await ctx.countMutation(workspace.id);
  const computer = await computerIn(ctx.db, workspace.id, ctx.path.computer, { lock: true });
  if (computer.state === 'deleted')
    throw new ApiError('invalid_state', `computer ${computer.name} is deleted`, {
      details: { current_state: 'deleted' },
    });
  checkName(ctx.body.name);
  checkLabels(ctx.deps, ctx.body.labels);
  const lifetime = ctx.body.lifetime && lifetimeChange(ctx.body.lifetime, ctx.deps.lifetimeNow());
  if (ctx.body.name !== undefined && ctx.body.name !== computer.name) {
    if (await computerNameTaken(ctx.db, workspace.id, ctx.body.name))
      throw new ApiError(
        'already_exists',
        `a computer named ${ctx.body.name} already exists in this workspace`,
      );
  }
  const updated = await updateComputerRow(ctx.db, computer.id, {
    name: ctx.body.name ?? null,
    labels: ctx.body.labels ?? null,
    ...(lifetime ? { lifetime } : {}),
  });
  return { status: 200, body: { computer: renderComputer(updated) } };
};

type ActionOp = 'startComputer' | 'stopComputer' | 'restartComputer' | 'deleteComputer' | 'recoverComputer';

/** start/stop/restart/delete/recover: one operation, or 409 `invalid_state` / `operation_in_progress`. */
async function act(
  ctx: Ctx<ActionOp, ComputerDeps>,
  name: 'start' | 'stop' | 'restart' | 'delete' | 'recover',
) {
  const { workspace } = await permittedWorkspace(ctx);
  await ctx.countMutation(workspace.id);
  const computer = await computerIn(ctx.db, workspace.id, ctx.path.computer);
  const operation = await requestComputerAction(ctx.db, computer.id, name, ctx.principal.id);
  // A start or a restart is activity (design §4.1): the idle timeout counts from it. After the row
  // lock the request took, so the touch is this transaction's own write.
  if (name === 'start' || name === 'restart')
    await touchComputerActivity(ctx.db, computer.id, ctx.deps.lifetimeNow());
  return {
    status: 202 as const,
    body: { operations: [renderOperation(operation, { result: true })] },
    headers: accepted([operation]),
  };
}

export const startComputer: Handler<'startComputer', ComputerDeps> = (ctx) => act(ctx, 'start');
export const stopComputer: Handler<'stopComputer', ComputerDeps> = (ctx) => act(ctx, 'stop');
export const restartComputer: Handler<'restartComputer', ComputerDeps> = (ctx) => act(ctx, 'restart');
export const deleteComputer: Handler<'deleteComputer', ComputerDeps> = (ctx) => act(ctx, 'delete');
/** Brings a failed computer to what its engine has: `running` or `stopped` (design §4.1). */
export const recoverComputer: Handler<'recoverComputer', ComputerDeps> = (ctx) => act(ctx, 'recover');

export const computerHandlers = {
  listComputers,
  getComputer,
  createComputer,
  updateComputer,
  startComputer,
  stopComputer,
  restartComputer,
  deleteComputer,
  recoverComputer,
};
