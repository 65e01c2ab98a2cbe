import { type IncomingMessage, type Server, type ServerResponse, STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import { ApiError } from '../platform/errors.js';
import { newRequestId } from '../platform/request-id.js';

/** node:http's answer when a whole request took longer than `requestTimeout` (no published code says it). */
const TIMEOUT = 'HTTP/1.1 408 Request Timeout\r\nConnection: close\r\n\r\n';

/**
 * Answers a request node:http cannot parse in the published error shape: `400 invalid_request`, with
 * the parser's reason (both `Content-Length` and `Transfer-Encoding`, a bad chunk, headers over
 * node's 16 KiB…) and a request id, where node alone would send a bare `400 Bad Request` or `431`.
 * The connection is then closed, as node closes it: what follows a request that cannot be parsed
 * cannot be parsed either. A request that took longer than `SVC_REQUEST_TIMEOUT_MS` keeps node's 408.
 * Nothing is written once an answer on that connection has begun.
 *
 * @example
 * answerClientErrors(server); // curl -H 'content-length: 3' -H 'transfer-encoding: chunked' … → 400 JSON
 */
export function answerClientErrors(server: Server): void {
  const answering = new WeakMap<Duplex, ServerResponse>();
  server.on('request', (request: IncomingMessage, response: ServerResponse) => {
    answering.set(request.socket, response);
    response.once('finish', () => {
      if (answering.get(request.socket) === response) answering.delete(request.socket);
    });
  });
  server.on('clientError', (error: Error & { code?: string; reason?: string }, socket: Duplex) => {
    const started = answering.get(socket)?.headersSent === true;
    if (socket.writable && !started) {
      if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') socket.write(TIMEOUT);
      else if (error.code?.startsWith('HPE_')) socket.write(invalidRequest(error));
    }
    socket.destroy();
  });
}

function invalidRequest(error: { code?: string; reason?: string }): string {
  const reason =
    error.code === 'HPE_HEADER_OVERFLOW'
      ? 'its headers are larger than the server accepts'
      : (error.reason ?? error.code ?? 'unparsable').replace(/[^\x20-\x7e]/g, '').replace(/\.$/, '');
  const requestId = newRequestId();
  const answer = new ApiError('invalid_request', `The request is not valid HTTP/1.1: ${reason}.`);
  const body = JSON.stringify(answer.toEnvelope(requestId));
  return (
    `HTTP/1.1 ${answer.status} ${STATUS_CODES[answer.status]}\r\n` +
    'Content-Type: application/json\r\n' +
    `Content-Length: ${Buffer.byteLength(body)}\r\n` +
    `Request-Id: ${requestId}\r\n` +
    'Connection: close\r\n\r\n' +
    body
  );
}
