import type { Http2Bindings, HttpBindings } from '@hono/node-server';

/**
 * What the Node adapter passes along with each request: node's request and response (`{ incoming,
 * outgoing }`), as @hono/node-server types them. Ours serves node:http, so they are node:http's; the
 * adapter's type also names node:http2's, which it would pass to an HTTP/2 server. Absent when a test
 * calls the core without a socket.
 *
 * @example
 * const address = (env: NodeEnv | undefined) => env?.incoming.socket.remoteAddress;
 */
export type NodeEnv = HttpBindings | Http2Bindings;
