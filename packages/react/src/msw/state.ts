// The stateful mock's memory: resources per collection, and operations that move to their final state
// on the mock's clock (pending → running → succeeded, one step each), carrying their target with them.
import type { Collection } from './collections.js';
import { idMaker, transitionOf } from './lifecycle.js';

/** A resource as the API renders it. */
export type Resource = Record<string, unknown> & { id: string };

/** One stored resource: its collection's path parameters (by id) and its rendering. */
export interface Stored {
  parents: Record<string, string>;
  value: Resource;
}

/** An operation record, as `GET /operations/{operation}` renders it. */
export type OperationRecord = Resource & {
  type: string;
  state: string;
  progress: number;
  target: { type: string; id: string };
};

/** Options of the stateful mode. */
export interface StateOptions {
  /** Milliseconds each step of an operation takes (pending → running → succeeded). Default 100. */
  stepMs?: number;
  /** The clock. Default `Date.now`. */
  now?: () => number;
  /** Seed of the ids' random part, so runs are repeatable. Default 1. */
  seed?: number;
}

const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

/**
 * The memory of a stateful mock: read and change it from a test (`mock.state`) to arrange a scene or
 * check what the app did.
 *
 * @example
 * import { createMock } from '@svc/react/msw';
 * const mock = createMock({ baseUrl: 'http://api.test/v1', stateful: true });
 * mock.state?.items('/workspaces/{workspace}/computers').map((c) => c.value.name);
 */
export class MockState {
  readonly stepMs: number;
  readonly now: () => number;
  private readonly newId: (now: number) => string;
  private readonly newRequestId: (now: number) => string;
  private readonly records = new Map<string, Stored[]>();
  private readonly operations = new Map<string, { record: OperationRecord; startedAt: number }>();

  constructor(
    readonly collections: readonly Collection[],
    options: StateOptions = {},
  ) {
    this.stepMs = options.stepMs ?? 100;
    this.now = options.now ?? Date.now;
    this.newId = idMaker(options.seed ?? 1);
    // Their own sequence, so answering does not change the ids a seed gives resources.
    this.newRequestId = idMaker(~(options.seed ?? 1));
  }

  /** A new id, as the server makes them (design §1). */
  id(): string {
    return this.newId(this.now());
  }

  /** A new request id, for one answer's `Request-Id` and an error's `request_id`. */
  requestId(): string {
    return this.newRequestId(this.now());
  }

  /** The time now, RFC 3339 in UTC without fractions, as the server renders timestamps. */
  timestamp(): string {
    return iso(this.now());
  }

  /** Every stored resource of a collection (by its list path), every parent included. */
  items(path: string): Stored[] {
    const list = this.records.get(path) ?? [];
    this.records.set(path, list);
    return list;
  }

  /** Adds a resource to a collection. */
  add(path: string, parents: Record<string, string>, value: Resource): Stored {
    const stored = { parents, value };
    this.items(path).push(stored);
    return stored;
  }

  /** Removes a resource, and every resource under it. */
  remove(path: string, id: string): void {
    this.records.set(
      path,
      this.items(path).filter((s) => s.value.id !== id),
    );
    const collection = this.collections.find((c) => c.path === path);
    for (const child of this.collections.filter((c) => collection && c.parents.includes(collection.param)))
      this.records.set(
        child.path,
        this.items(child.path).filter((s) => s.parents[collection!.param] !== id),
      );
  }

  /** The resource of a collection with this id or name under these parents. */
  find(path: string, parents: Record<string, string>, idOrName: string): Stored | undefined {
    this.tick();
    return this.items(path).find(
      (s) =>
        Object.entries(parents).every(([k, v]) => s.parents[k] === v) &&
        (s.value.id === idOrName || s.value.name === idOrName),
    );
  }

  /** Starts an operation on a target; it holds the target in its transient state until it ends. */
  start(record: OperationRecord, target: Resource | undefined): OperationRecord {
    this.operations.set(record.id, { record, startedAt: this.now() });
    const { during } = transitionOf(record.type);
    if (target && during)
      Object.assign(target, {
        state: during,
        current_operation_id: record.id,
        updated_at: record.created_at,
      });
    return record;
  }

  /** Adds a finished operation (seed data). */
  remember(record: OperationRecord): void {
    this.operations.set(record.id, { record, startedAt: Number.NEGATIVE_INFINITY });
  }

  /** An operation by id, moved on to now. */
  operation(id: string): OperationRecord | undefined {
    this.tick();
    return this.operations.get(id)?.record;
  }

  /** Every operation of a workspace, moved on to now. */
  operationsOf(workspaceId: string): OperationRecord[] {
    this.tick();
    return [...this.operations.values()].map((o) => o.record).filter((r) => r.workspace_id === workspaceId);
  }

  /** Ends every operation now, as if their steps had all passed. */
  settle(): void {
    const ended = this.now() - 2 * this.stepMs;
    for (const entry of this.operations.values()) entry.startedAt = Math.min(entry.startedAt, ended);
    this.tick();
  }

  /** Moves every operation to where the clock says it is, and its target with it. */
  tick(): void {
    const now = this.now();
    for (const entry of this.operations.values()) {
      const { record } = entry;
      if (record.state === 'succeeded' || record.state === 'failed') continue;
      const steps = Math.floor((now - entry.startedAt) / this.stepMs);
      if (steps >= 1 && record.state === 'pending') {
        const at = iso(Math.min(now, entry.startedAt + this.stepMs));
        Object.assign(record, { state: 'running', progress: 50, started_at: at, updated_at: at });
      }
      if (steps >= 2) this.finish(record, iso(Math.min(now, entry.startedAt + 2 * this.stepMs)));
    }
  }

  private finish(record: OperationRecord, at: string): void {
    Object.assign(record, { state: 'succeeded', progress: 100, completed_at: at, updated_at: at });
    const { to } = transitionOf(record.type);
    for (const collection of this.collections) {
      const target = this.items(collection.path).find((s) => s.value.id === record.target.id)?.value;
      if (!target || !to) continue;
      Object.assign(target, { state: to, updated_at: at });
      if (target.current_operation_id === record.id) delete target.current_operation_id;
      if (to === 'running') target.started_at = at;
      if (to === 'stopped') target.stopped_at = at;
    }
  }
}
