import { ApiError } from './errors.js';
import type { Counter } from './ratelimit-counter.js';
import type { CounterStore } from './ratelimit-store.js';

/** The two policies of design §11. */
export type RateLimitPolicyName = 'principal' | 'workspace_mutations';

/** `quota` requests per `windowSeconds`. */
export interface RateLimitPolicy {
  quota: number;
  windowSeconds: number;
}

export type RateLimitPolicies = Partial<Record<RateLimitPolicyName, RateLimitPolicy>>;

/** design §11: 600 requests/min per principal, 120 mutations/min per workspace. */
export const DEFAULT_RATE_LIMITS: Readonly<RateLimitPolicies> = Object.freeze({
  principal: { quota: 600, windowSeconds: 60 },
  workspace_mutations: { quota: 120, windowSeconds: 60 },
});

const POLICY_NAMES: readonly RateLimitPolicyName[] = ['principal', 'workspace_mutations'];

/**
 * The policy names on the wire (headers and `details.policy`): the spec's `^[a-z][a-z0-9-]*$`, so
 * `workspace-mutations`. `SVC_RATE_LIMITS` keeps the underscore form of an environment value.
 */
export const POLICY_WIRE_NAMES: Readonly<Record<RateLimitPolicyName, string>> = Object.freeze({
  principal: 'principal',
  workspace_mutations: 'workspace-mutations',
});

/**
 * Parses `SVC_RATE_LIMITS`: unset or empty → the defaults; `off` → `undefined` (no limiting);
 * otherwise a comma list `name=quota/seconds` that overrides the named policies, e.g.
 * `principal=600/60,workspace_mutations=120/60`. A policy with quota 0 is off.
 *
 * @example
 * parseRateLimits('principal=10/1'); // { principal: { quota: 10, windowSeconds: 1 }, workspace_mutations: {...120/60} }
 */
export function parseRateLimits(spec: string | undefined): RateLimitPolicies | undefined {
  const text = spec?.trim() ?? '';
  if (text === '') return { ...DEFAULT_RATE_LIMITS };
  if (text === 'off') return undefined;
  const policies: RateLimitPolicies = { ...DEFAULT_RATE_LIMITS };
  for (const part of text.split(',')) {
    const match = /^\s*([a-z_]+)\s*=\s*(\d+)\s*\/\s*(\d+)\s*$/.exec(part);
    if (!match) throw new Error(`expected name=quota/seconds, got ${JSON.stringify(part)}`);
    const name = match[1] as RateLimitPolicyName;
    if (!POLICY_NAMES.includes(name))
      throw new Error(`unknown policy ${name}; known: ${POLICY_NAMES.join(', ')}`);
    const quota = Number(match[2]);
    const windowSeconds = Number(match[3]);
    if (windowSeconds < 1) throw new Error(`${name}: the window must be at least 1 second`);
    if (quota === 0) delete policies[name];
    else policies[name] = { quota, windowSeconds };
  }
  return policies;
}

/** Where one key stands in one policy after a request was counted (or refused). */
export interface RateLimitState {
  policy: RateLimitPolicyName;
  quota: number;
  windowSeconds: number;
  remaining: number;
  /** Seconds until the current window ends. */
  resetSeconds: number;
}

/**
 * 429 `rate_limited` with `Retry-After`, `details: {policy, retry_after_seconds}` and the rate-limit
 * headers of the exceeded policy.
 *
 * @example
 * if (error instanceof RateLimitError) console.log(error.retryAfterSeconds);
 */
export class RateLimitError extends ApiError {
  override name = 'RateLimitError';
  readonly retryAfterSeconds: number;

  constructor(state: RateLimitState, retryAfterSeconds: number) {
    super(
      'rate_limited',
      `rate limit ${state.policy} exceeded (${state.quota} per ${state.windowSeconds} s)`,
      {
        details: { policy: POLICY_WIRE_NAMES[state.policy], retry_after_seconds: retryAfterSeconds },
        headers: { ...rateLimitHeaders([state]), 'retry-after': String(retryAfterSeconds) },
      },
    );
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

/**
 * The API's rate limits (design §11) over shared counters ({@link counterStore}): on PostgreSQL every
 * replica counts in one table, so N replicas give a client the budget of one; on PGlite (one
 * process) in memory. Fixed windows that start with a key's first request (rate-limiter-flexible);
 * a refused request counts too but never moves the window's end, so retrying early does not extend
 * the wait. `/v1` and `/mcp` share one limiter: the MCP route calls {@link RateLimiter.take} with the
 * same policies and keys.
 *
 * @example
 * const limiter = new RateLimiter(DEFAULT_RATE_LIMITS, counterStore(db));
 * const state = await limiter.take('principal', principalId); // throws RateLimitError when exceeded
 * Object.assign(responseHeaders, rateLimitHeaders([state]));
 */
export class RateLimiter {
  readonly policies: Readonly<RateLimitPolicies>;
  private readonly counters: Partial<Record<RateLimitPolicyName, Counter>> = {};

  private readonly onRefusal: ((policy: RateLimitPolicyName) => void) | undefined;

  /** `onRefusal` is told of every refused request (the metrics' refusal counter). */
  constructor(
    policies: RateLimitPolicies,
    store: CounterStore,
    onRefusal?: (policy: RateLimitPolicyName) => void,
  ) {
    this.policies = policies;
    this.onRefusal = onRefusal;
    for (const name of POLICY_NAMES) {
      const limits = policies[name];
      if (limits)
        this.counters[name] = store({
          name: `api_${name}`,
          points: limits.quota,
          durationSeconds: limits.windowSeconds,
          lease: true,
        });
    }
  }

  /**
   * Counts one request of `key` against `policy`. Answers where the key stands, or `undefined` when
   * that policy is off; throws `RateLimitError` when the request is over the limit.
   */
  async take(policy: RateLimitPolicyName, key: string): Promise<RateLimitState | undefined> {
    const limits = this.policies[policy];
    const counter = this.counters[policy];
    if (!limits || !counter) return undefined;
    const counted = await counter.consume(key);
    const resetSeconds = Math.max(1, Math.ceil(counted.msBeforeNext / 1000));
    const state: RateLimitState = { policy, ...limits, remaining: counted.remaining, resetSeconds };
    if (!counted.allowed) {
      this.onRefusal?.(policy);
      throw new RateLimitError(state, resetSeconds);
    }
    return state;
  }

  /** Gives back one request of `key` counted by {@link RateLimiter.take} that turned out not to count. */
  async giveBack(policy: RateLimitPolicyName, key: string): Promise<void> {
    await this.counters[policy]?.refund(key);
  }
}

/**
 * The IETF ratelimit-headers (draft-ietf-httpapi-ratelimit-headers) fields for the given states, as
 * structured-field lists: `RateLimit-Policy` lists every policy that applied, `RateLimit` the one
 * closest to exhaustion (fewest requests left), as the spec's header description says.
 *
 * @example
 * rateLimitHeaders([state]); // { 'ratelimit-policy': '"principal";q=600;w=60', ratelimit: '"principal";r=599;t=42' }
 */
export function rateLimitHeaders(states: readonly (RateLimitState | undefined)[]): Record<string, string> {
  const policy: string[] = [];
  let closest: RateLimitState | undefined;
  for (const state of states) {
    if (!state) continue;
    policy.push(`"${POLICY_WIRE_NAMES[state.policy]}";q=${state.quota};w=${state.windowSeconds}`);
    if (!closest || state.remaining < closest.remaining) closest = state;
  }
  if (!closest) return {};
  return {
    'ratelimit-policy': policy.join(', '),
    ratelimit: `"${POLICY_WIRE_NAMES[closest.policy]}";r=${closest.remaining};t=${closest.resetSeconds}`,
  };
}
