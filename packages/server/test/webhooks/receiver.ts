import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request a test receiver got. */
export interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  at: number;
}

/**
 * How a receiver answers a path: a status, `hang` (never, until the receiver closes), a status after
 * a delay, or a function of how many requests the path had before this one.
 */
export type Answer = number | 'hang' | { status: number; afterMs: number } | ((before: number) => number);

/**
 * A webhook receiver on 127.0.0.1 (port 0) for one test file: it records what it gets and answers
 * each path as told (default 204). Closing it cuts every connection, hung ones too.
 *
 * @example
 * const receiver = await startReceiver();
 * receiver.answer('/a', 500);
 * await receiver.close();
 */
export async function startReceiver(): Promise<{
  url(path: string): string;
  answer(path: string, answer: Answer): void;
  received(path: string): Received[];
  waitFor(path: string, count: number, timeoutMs?: number): Promise<Received[]>;
  close(): Promise<void>;
}> {
  const answers = new Map<string, Answer>();
  const log: Received[] = [];
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const path = request.url ?? '/';
      log.push({
        path,
        headers: request.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        at: Date.now(),
      });
      const answer = answers.get(path) ?? 204;
      if (answer === 'hang') return;
      if (typeof answer === 'object') {
        setTimeout(() => response.writeHead(answer.status).end(), answer.afterMs);
        return;
      }
      const status = typeof answer === 'function' ? answer(received(path).length - 1) : answer;
      response.writeHead(status).end();
    });
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const port = (server.address() as AddressInfo).port;
  const received = (path: string) => log.filter((r) => r.path === path);
  return {
    url: (path) => `http://127.0.0.1:${port}${path}`,
    answer: (path, answer) => answers.set(path, answer),
    received,
    async waitFor(path, count, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      while (received(path).length < count) {
        if (Date.now() > deadline)
          throw new Error(
            `receiver: ${received(path).length} of ${count} requests to ${path} within ${timeoutMs} ms`,
          );
        await new Promise((r) => setTimeout(r, 20));
      }
      return received(path);
    },
    async close() {
      server.closeAllConnections();
      await new Promise((done) => server.close(done));
    },
  };
}
