// What a webhook delivery must be, read from the bundle's `webhooks` section: its body valid against the
// payload schema of the webhook named by the event's type, every header parameter present when required
// and valid against its schema, and the signature verified with the endpoint's secret by the
// `standardwebhooks` package (what receivers use). And a receiver for the server run: one test's,
// on 127.0.0.1, bounded in the requests it keeps and in how long it waits.
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { webhookNames, webhookPayloadSchema } from '@svc/contract';
import { Webhook } from 'standardwebhooks';
import { escapePointer, resolve, validatorAt } from '../../src/validate.js';
import { document } from './spec-index.js';

/** One request the receiver got. */
export interface Delivery {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

/**
 * Why a delivery breaks the spec's webhook for its event type (empty: it is a delivery the spec allows).
 * `secret` is the endpoint's (`whsec_…`); the signature is checked with `standardwebhooks`, which also
 * refuses a timestamp more than 5 minutes from the clock.
 */
export function deliveryViolations(delivery: Delivery, secret: string): string[] {
  const problems: string[] = [];
  let body: { type?: unknown } | undefined;
  try {
    body = JSON.parse(delivery.body);
  } catch {
    return ['the body is not JSON'];
  }
  const type = String(body?.type);
  if (!webhookNames(document).includes(type)) return [`the body's type ${type} has no webhook in the spec`];
  const payload = validatorAt(
    `/components/schemas/${escapePointer(webhookPayloadSchema(document, type).schema)}`,
  );
  if (!payload(body))
    problems.push(`body: ${JSON.stringify(payload.errors?.map((e) => `${e.instancePath} ${e.message}`))}`);
  if (!/^application\/json\b/.test(String(delivery.headers['content-type'])))
    problems.push(`content-type is ${delivery.headers['content-type']}, not application/json`);
  // The header parameters as written, so each schema is compiled where it is (a `$ref` or in place).
  const post = `/webhooks/${escapePointer(type)}/post`;
  const parameters = (resolve(nodeAt(post)).value.parameters ?? []) as unknown[];
  parameters.forEach((raw, index) => {
    const { value: header, pointer } = resolve(raw);
    if (header.in !== 'header') return;
    const name = String(header.name);
    const value = delivery.headers[name.toLowerCase()];
    if (value === undefined) {
      if (header.required === true) problems.push(`header ${name} is missing`);
      return;
    }
    const validate = validatorAt(`${pointer ?? `${post}/parameters/${index}`}/schema`);
    if (!validate(value)) problems.push(`header ${name}: ${value} ${validate.errors?.[0]?.message}`);
  });
  try {
    new Webhook(secret).verify(delivery.body, delivery.headers as Record<string, string>);
  } catch (error) {
    problems.push(`signature: ${(error as Error).message}`);
  }
  return problems;
}

/** The node at a JSON pointer of the bundle. */
function nodeAt(pointer: string): unknown {
  return pointer
    .split('/')
    .slice(1)
    .reduce<unknown>(
      (at, token) => (at as Record<string, unknown>)?.[token.replace(/~1/g, '/').replace(/~0/g, '~')],
      document,
    );
}

/**
 * A webhook receiver for one test: 127.0.0.1, `port` (default 0, any free one), answers 204, keeps at
 * most `limit` requests (more are answered 503 and dropped), and waits at most `timeoutMs` for them.
 *
 * @example
 * const receiver = await startReceiver();
 * const [delivery] = await receiver.waitFor(1);
 * await receiver.close();
 */
export async function startReceiver({ limit = 32, timeoutMs = 30_000, port = 0 } = {}) {
  const kept: Delivery[] = [];
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      if (kept.length >= limit) return response.writeHead(503).end();
      kept.push({
        path: request.url ?? '/',
        headers: request.headers,
        body: Buffer.concat(chunks).toString(),
      });
      response.writeHead(204).end();
    });
  });
  await new Promise<void>((done, fail) => {
    server.once('error', fail);
    server.listen(port, '127.0.0.1', done);
  });
  const bound = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${bound}/hook`,
    /** The first `count` requests, once they have come; throws after `timeoutMs`. */
    async waitFor(count: number, where: (d: Delivery) => boolean = () => true): Promise<Delivery[]> {
      const deadline = Date.now() + timeoutMs;
      while (kept.filter(where).length < count) {
        if (Date.now() > deadline)
          throw new Error(`receiver: ${kept.filter(where).length} of ${count} deliveries in ${timeoutMs} ms`);
        await new Promise((r) => setTimeout(r, 50));
      }
      return kept.filter(where).slice(0, count);
    },
    async close(): Promise<void> {
      server.closeAllConnections();
      await new Promise((done) => server.close(done));
    },
  };
}
