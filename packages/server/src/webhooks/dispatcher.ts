import {
  lastWorkspaceEventSequence,
  WORKSPACE_EVENTS_CHANNEL,
  workspaceEventsAfter,
} from '../computers/repositories/events.js';
import type { Database } from '../platform/db/database.js';
import { newId } from '../platform/ids.js';
import {
  lockFollowingEndpoints,
  queueWebhookDelivery,
  setQueuedThrough,
  workspacesBehind,
} from './repositories/webhook-deliveries.js';

/** Events read per endpoint and pass; a longer backlog takes more passes. */
const BATCH = 200;

/** Whether an endpoint subscribed to `types` receives an event of `type` (`*`: every type). */
function subscribes(types: readonly string[], type: string): boolean {
  return types.includes('*') || types.includes(type);
}

/**
 * Queues the workspace's new events for its endpoints, in one transaction under their row locks: one
 * delivery per (endpoint, event) that the endpoint subscribes to, and its cursor moved past them, so
 * each event is queued exactly once whichever replicas run this at once. A disabled endpoint's cursor
 * jumps to the log's end: events while it is disabled are not queued. Answers how many were queued,
 * and whether a pass left more to do.
 *
 * @example
 * const { queued } = await fanOut(db, workspaceId, new Date());
 */
export async function fanOut(
  db: Database,
  workspaceId: string,
  now: Date,
): Promise<{ queued: number; more: boolean }> {
  return db.transaction(async (tx) => {
    let queued = 0;
    let more = false;
    const endpoints = await lockFollowingEndpoints(tx, workspaceId);
    // Read before the events: every event up to it has committed, so when none is found after a
    // cursor below it, retention took them and the cursor may jump (never past an event not yet seen).
    const end = await lastWorkspaceEventSequence(tx, workspaceId);
    for (const endpoint of endpoints) {
      if (endpoint.status === 'disabled') {
        await setQueuedThrough(tx, endpoint.id, end);
        continue;
      }
      const events = await workspaceEventsAfter(tx, workspaceId, endpoint.queued_through, BATCH);
      const last = events.at(-1);
      if (!last) {
        if (end > endpoint.queued_through) await setQueuedThrough(tx, endpoint.id, end);
        continue;
      }
      for (const event of events) {
        if (!subscribes(endpoint.event_types, event.type)) continue;
        await queueWebhookDelivery(tx, {
          id: newId(),
          endpointId: endpoint.id,
          eventId: event.data.id,
          sequence: event.sequence,
          type: event.type,
          payload: JSON.stringify(event.data),
          test: false,
          due: now,
        });
        queued++;
      }
      await setQueuedThrough(tx, endpoint.id, last.sequence);
      if (events.length === BATCH) more = true;
    }
    return { queued, more };
  });
}

/** What the dispatcher needs. */
export interface DispatcherOptions {
  db: Database;
  now: () => number;
  /** The safety net: a pass over every workspace behind its log (default 10 s). */
  sweepMs?: number;
  /** Called after deliveries were queued here (the local worker looks at once). */
  onQueued?: () => void;
  log?: (message: string, fields: Record<string, unknown>) => void;
}

/**
 * Runs on every replica: follows `NOTIFY svc_workspace_events` (its payload is the workspace whose log
 * grew) and fans each such workspace's new events out to its endpoints; a slow sweep catches a
 * notification that never came (and events of a replica that died before its wake-up reached anyone).
 *
 * @example
 * const dispatcher = new WebhookDispatcher({ db: db.background(), now: Date.now });
 * await dispatcher.start();
 */
export class WebhookDispatcher {
  readonly #options: DispatcherOptions;
  readonly #pending = new Set<string>();
  #running: Promise<void> | undefined;
  #timer: NodeJS.Timeout | undefined;
  #unlisten: (() => Promise<void>) | undefined;
  #stopped = true;

  constructor(options: DispatcherOptions) {
    this.#options = options;
  }

  async start(): Promise<void> {
    this.#stopped = false;
    this.#unlisten = await this.#options.db.listen(
      WORKSPACE_EVENTS_CHANNEL,
      (workspaceId) => this.wake(workspaceId),
      {
        onGap: () => void this.sweep(),
      },
    );
    this.#timer = setInterval(() => void this.sweep(), this.#options.sweepMs ?? 10_000);
    this.#timer.unref();
    void this.sweep();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    clearInterval(this.#timer);
    await this.#unlisten?.();
    await this.#running;
  }

  /** Fans out `workspaceId` soon (coalesced with other wake-ups). */
  wake(workspaceId: string): void {
    if (this.#stopped) return;
    this.#pending.add(workspaceId);
    this.#running ??= this.#drain().finally(() => {
      this.#running = undefined;
      if (this.#pending.size > 0) this.wake([...this.#pending][0] as string);
    });
  }

  /** Fans out every workspace with an endpoint behind its log. */
  async sweep(): Promise<void> {
    if (this.#stopped) return;
    try {
      for (const id of await workspacesBehind(this.#options.db, 1000)) this.wake(id);
    } catch (error) {
      this.#options.log?.('webhook dispatch sweep failed', { error: String(error) });
    }
  }

  /** Resolves once nothing is pending (tests). */
  async idle(): Promise<void> {
    while (this.#running) await this.#running;
  }

  async #drain(): Promise<void> {
    while (this.#pending.size > 0 && !this.#stopped) {
      const [workspaceId] = this.#pending;
      if (workspaceId === undefined) break;
      this.#pending.delete(workspaceId);
      try {
        const { queued, more } = await fanOut(this.#options.db, workspaceId, new Date(this.#options.now()));
        if (more) this.#pending.add(workspaceId);
        if (queued > 0) this.#options.onQueued?.();
      } catch (error) {
        this.#options.log?.('webhook dispatch failed', { workspace_id: workspaceId, error: String(error) });
        // Again in a second (a lock or statement timeout under load), not at the next sweep.
        setTimeout(() => this.wake(workspaceId), 1000).unref();
      }
    }
  }
}
