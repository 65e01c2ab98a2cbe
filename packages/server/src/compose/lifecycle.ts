import type { OperationWorker } from '../computers/worker.js';
import type { Database } from '../platform/db/database.js';
import type { Log } from '../platform/observe/log.js';
import { type HousekeepingOptions, housekeeping } from './housekeeping.js';

/**
 * Starts and stops what runs beside requests: the operation worker and housekeeping (every
 * `housekeepingMs`, default 5 minutes). `close` also closes the database when the app opened it.
 *
 * @example
 * const { start, close } = lifecycle({ db, worker, ownsDb: true, log });
 */
export function lifecycle(options: {
  db: Database;
  worker: OperationWorker;
  /** The lifetime check (design §4.1): started with the worker, stopped before it. */
  lifetimes?: { start(): void; stop(): Promise<void> } | undefined;
  ownsDb: boolean;
  log: Log;
  housekeepingMs?: number | undefined;
  /** How long the event and output logs keep what they hold (`housekeeping`'s defaults otherwise). */
  retention?: HousekeepingOptions | undefined;
  /**
   * Started after the worker, stopped after it: the Docker fleet's heartbeat, and each host's
   * reconciler and warm pool.
   */
  reconciler?: { start(): Promise<void> | void; stop(): Promise<void> } | undefined;
  /** Webhooks' dispatcher and delivery worker: started after the worker, stopped before it. */
  webhooks?: { start(): Promise<void>; stop(): Promise<void> } | undefined;
  /** Run first on close (stop listening for the database's notifications). */
  beforeClose?: () => Promise<void>;
}): { start(): Promise<void>; close(): Promise<void> } {
  const { db, worker, log } = options;
  let timer: NodeJS.Timeout | undefined;
  let started = false;
  return {
    async start() {
      if (started) return;
      started = true;
      await worker.start();
      options.lifetimes?.start();
      await options.reconciler?.start();
      await options.webhooks?.start();
      timer = setInterval(
        () => {
          housekeeping(db.background(), options.retention).catch((error: unknown) =>
            log('housekeeping failed', { error: String(error) }),
          );
        },
        options.housekeepingMs ?? 5 * 60_000,
      );
      timer.unref();
    },
    async close() {
      clearInterval(timer);
      await options.beforeClose?.();
      await options.lifetimes?.stop();
      if (started) await options.webhooks?.stop();
      if (started) await worker.stop();
      await options.reconciler?.stop();
      started = false;
      if (options.ownsDb) await db.close();
    },
  };
}
