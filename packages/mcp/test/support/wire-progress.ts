import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { Progress } from '@modelcontextprotocol/sdk/types.js';

/**
 * Records the progress notifications a connected transport receives, as they come off the wire. The
 * SDK client runs an `onprogress` callback a microtask after reading a notification, but drops the
 * callback synchronously when the response arrives; when both come in one read (a fast mock, a loaded
 * machine) the callback never runs. Tests of what the server SENT read this list instead. Call it
 * after `client.connect(transport)`, which installs the handler this one wraps.
 *
 * @example
 * await client.connect(transport);
 * const progress = recordProgress(transport);
 */
export function recordProgress(transport: Transport): Progress[] {
  const seen: Progress[] = [];
  const deliver = transport.onmessage;
  transport.onmessage = (message) => {
    if ('method' in message && message.method === 'notifications/progress')
      seen.push(message.params as unknown as Progress);
    deliver?.(message);
  };
  return seen;
}
