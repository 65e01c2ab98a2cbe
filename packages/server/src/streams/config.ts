// The streams' section of the configuration: each principal's share of open event streams, and their
// keep-alive.
import { type Env, int } from '../platform/config.js';

/** The streams' section of the configuration. */
export interface StreamsSection {
  /**
   * `SVC_STREAMS_PER_PRINCIPAL` (default 16): the event streams (`GET …/operations/{operation}/output`,
   * `GET …/workspaces/{workspace}/events`) one principal may hold open at once on this replica; one
   * more is answered 429 (`streams`).
   */
  streamsPerPrincipal: number;
  /** `SVC_STREAM_KEEPALIVE_MS` (default 15 s): how often an open event stream sends a `: keepalive` comment. */
  streamKeepaliveMs: number;
}

/**
 * The streams' settings from `env`.
 *
 * @example
 * streamsSection({ SVC_STREAMS_PER_PRINCIPAL: '4' }).streamsPerPrincipal; // 4
 */
export function streamsSection(env: Env): StreamsSection {
  return {
    streamsPerPrincipal: int(env, 'SVC_STREAMS_PER_PRINCIPAL', 16, 1, 10_000),
    streamKeepaliveMs: int(env, 'SVC_STREAM_KEEPALIVE_MS', 15_000, 10, 300_000),
  };
}
