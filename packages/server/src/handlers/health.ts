import { ApiError } from '../platform/errors.js';
import { ping } from '../platform/repositories/health.js';
import type { HealthDeps } from './deps.js';
import type { Handler } from './types.js';

/** How long `GET /health` waits for the database before answering 503. */
const HEALTH_TIMEOUT_MS = 2000;

/** `GET /health`: 200 when the database answers a ping in time, else 503 `unavailable`. */
export const getHealth: Handler<'getHealth', HealthDeps> = async (ctx) => {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      ping(ctx.db),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error('database health check timed out')), HEALTH_TIMEOUT_MS);
      }),
    ]);
  } catch (error) {
    throw new ApiError('unavailable', 'the database is unreachable; retry shortly', {
      headers: { 'retry-after': '5' },
      cause: error,
    });
  } finally {
    clearTimeout(timer);
  }
  return {
    status: 200,
    body: { status: 'ok', version: ctx.deps.version, checked_at: new Date().toISOString() },
  };
};

export const healthHandlers = { getHealth };
