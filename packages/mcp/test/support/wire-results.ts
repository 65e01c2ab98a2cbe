import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';

/**
 * Records the bytes of every JSON-RPC result a connected transport receives, as the server sent it:
 * the JSON of `result`, taken off the wire before the SDK client parses it (a JSON text re-serialized
 * after parsing is the same bytes, so this is the length of what travelled). Call it after
 * `client.connect(transport)`, which installs the handler this one wraps.
 *
 * @example
 * await client.connect(transport);
 * const results = recordResults(transport);
 * await client.listTools();
 * results.at(-1)?.bytes; // bytes of the tools/list result
 */
export function recordResults(transport: Transport): { id: string | number; bytes: number }[] {
  const seen: { id: string | number; bytes: number }[] = [];
  const deliver = transport.onmessage;
  transport.onmessage = (message, extra) => {
    if ('result' in message && 'id' in message)
      seen.push({ id: message.id, bytes: Buffer.byteLength(JSON.stringify(message.result)) });
    deliver?.(message, extra);
  };
  return seen;
}
