import type { Database } from './db/database.js';
import { purgeExpiredIdempotencyKeys } from './idempotency.js';
import { purgeExpiredJtis } from './repositories/auth/assertion-jtis.js';
import { purgeDeletedComputers } from './repositories/computers.js';

/** What one housekeeping pass removed. */
export interface HousekeepingReport {
  jtis: number;
  idempotencyKeys: number;
  computers: number;
}

/**
 * Deletes what has outlived its purpose: assertion jtis past their expiry, idempotency records older
 * than 24 h, and computers deleted more than 7 days ago (their operations stay). Safe to run on
 * every replica at once; the server runs it every few minutes.
 *
 * @example
 * const report = await housekeeping(db); // { jtis: 3, idempotencyKeys: 0, computers: 1 }
 */
export async function housekeeping(db: Database): Promise<HousekeepingReport> {
  const jtis = await purgeExpiredJtis(db);
  const idempotencyKeys = await purgeExpiredIdempotencyKeys(db);
  const computers = await purgeDeletedComputers(db);
  return { jtis, idempotencyKeys, computers };
}
